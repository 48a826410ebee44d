package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/edgebench/edgebench/internal/cli"
	"github.com/edgebench/edgebench/loadgen"
	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/measure"
	"github.com/edgebench/edgebench/probe"
	"github.com/edgebench/edgebench/wire"
)

// runFlags is what a load test command (run, ab, wrk) was given.
type runFlags struct {
	cfg    loadgen.Config
	url    string
	format string // edgebench, ab, wrk or json
	repeat int
	auto   *measure.Auto // --repeat auto; repeat is then its most runs
	labels map[string]string
	quiet  bool

	noProbe       bool
	probeInterval time.Duration
	probeRoot     string
	watches       []probe.Watch

	publish *publishFlags
	tool    *tool // the lines of the tool a command stands in for; nil for run
}

// tool is what ab or wrk print around their report, where they print it,
// and the files they write. Only text reports get it: --format json
// prints the JSON alone.
type tool struct {
	banner   func(stdout io.Writer)                                     // once, first
	before   func(stdout io.Writer)                                     // before each run
	progress func(stderr io.Writer) func(loadgen.Progress)              // during each run
	report   func(stdout, stderr io.Writer, r *report.LoadResult) error // after each run
	files    func(r *report.LoadResult) error                           // after each run, whatever the format
	failed   func(stdout io.Writer)                                     // when a run fails before its report
}

// parseRunFlags parses args, which may put the URL before, between or after
// the flags (wrk puts it last, ab too, people put it first). The flags are
// ab's and wrk's where they overlap, with wrk's long names.
func parseRunFlags(args []string, stderr io.Writer, getenv func(string) string) (*runFlags, error) {
	rf := &runFlags{labels: map[string]string{}}
	fs := cli.NewFlagSet("run", "edgebench run [flags] URL", stderr)
	c := &rf.cfg
	fs.IntVarP(&c.Connections, "connections", "c", 10, "connections (concurrency)")
	fs.Int64VarP(&c.Requests, "requests", "n", 0, "stop after this many requests (0: no limit)")
	fs.DurationVarP(&c.Duration, "duration", "d", 0, "duration, e.g. 30s, 2m or 30 (default 10s unless -n is given)")
	fs.DurationVar(&c.MaxTime, "max-time", loadgen.DefaultMaxTime, "with -n and no -d: the run ends after this long, its requests in flight cut, so a server that never ends a response cannot hold it (0: no bound)")
	fs.IntVarP(&c.Threads, "threads", "t", 0, "threads, as wrk's, each with its share of the connections (0: one per CPU); at most one event loop per CPU runs them")
	fs.BoolVarP(&c.KeepAlive, "keepalive", "k", true, "keep-alive, the default as in wrk (-k=false: off)")
	fs.BoolFunc("no-keepalive", "a new connection per request, as ab without -k", func(s string) error {
		off, err := strconv.ParseBool(s)
		c.KeepAlive = !off
		return err
	})
	headerFlag(fs, &c.Headers, "request header `'Name: value'` (repeatable)")
	fs.StringVarP(&c.Method, "method", "m", "GET", "request method")
	body := fs.String("body", "", "request body; @FILE reads it from FILE")
	fs.DurationVar(&c.Timeout, "timeout", 2*time.Second, "idle timeout: a request fails when the server sends nothing for this long (connecting, before the first byte or between reads); a body still flowing never times out")
	fs.Float64Var(&c.Rate, "rate", 0, "open loop: requests per second over all connections (as wrk2 -R)")
	fs.DurationVar(&c.Warmup, "warmup", 0, "warm-up excluded from the statistics")
	rf.repeat = 1
	fs.Func("repeat", "`N|auto`: run N times and report the spread (default 1); auto: at least 3 runs, more while req/s (p99 with --rate) varies by more than --repeat-rsd, at most --repeat-max, within --repeat-budget", func(s string) error {
		if s == "auto" {
			rf.auto = &measure.Auto{}
			return nil
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			return errors.New("want a number of runs or auto")
		}
		rf.auto, rf.repeat = nil, n
		return nil
	})
	repeatRSD := fs.Float64("repeat-rsd", measure.DefaultRSDPct, "--repeat auto: the relative standard deviation of req/s (p99 with --rate), in %, at which the runs are stable")
	repeatMax := fs.Int("repeat-max", measure.DefaultMaxRuns, "--repeat auto: the most runs")
	repeatBudget := fs.Duration("repeat-budget", 10*time.Minute, "--repeat auto: no new run after this time (0: no limit)")
	fs.Var(cli.Pairs(rf.labels), "label", "label k=v attached to the result (repeatable)")
	fs.StringVar(&rf.format, "format", "edgebench", "report: edgebench, ab, wrk, h2load or json")
	fs.Bool("latency", false, "accepted as wrk's: every report has the latency distribution")
	fs.BoolVarP(&rf.quiet, "quiet", "q", false, "no live progress line")
	fs.BoolVar(&c.LengthCheck, "length-check", false, "count 2xx bodies whose length differs from the first one as failures (ab's Length)")
	fs.BoolFunc("no-length-check", "no length check: the default now, accepted for compatibility", func(s string) error {
		off, err := strconv.ParseBool(s)
		c.LengthCheck = !off
		return err
	})
	fs.BoolVar(&rf.noProbe, "no-probe", false, "do not sample the machine during the run")
	fs.BoolVar(&rf.noProbe, "no-system", false, "the same as --no-probe (its name in ab and wrk modes)")
	watchFlag(fs, &rf.watches, "process `NAME|PID` of the server's to report and count as the server's, a NAME meaning all of that name (repeatable; always watched: the server on the target's port with its workers and upstreams, and this run)")
	fs.DurationVar(&rf.probeInterval, "probe-interval", time.Second, "sampling interval")
	fs.StringVar(&rf.probeRoot, "probe-root", "/", "read /proc and /sys below this folder")
	rf.publish = addPublishFlags(fs, getenv)
	tf := addTLSFlags(fs, c, true)

	rest, err := fs.Parse(args)
	if err != nil {
		return nil, err
	}
	if rf.url, err = oneURL(rest, "edgebench run [flags] URL"); err != nil {
		return nil, err
	}
	c.URL = rf.url
	// The defaults are 10 connections and 2 s: a zero was typed.
	if c.Connections == 0 {
		return nil, cli.Usagef("-c 0: want at least 1 connection")
	}
	if c.Timeout == 0 {
		return nil, cli.Usagef("--timeout 0: want a timeout such as 2s (a request with no timeout could hold the run forever)")
	}
	if err := maxTimeFlag(fs, c); err != nil {
		return nil, err
	}
	if strings.HasPrefix(*body, "@") {
		b, err := os.ReadFile((*body)[1:])
		if err != nil {
			return nil, cli.Usagef("--body: %v", err)
		}
		c.Body = b
	} else if *body != "" {
		c.Body = []byte(*body)
	}
	switch rf.format {
	case "edgebench", "ab", "wrk", "h2load", "json":
	default:
		return nil, cli.Usagef("--format %q: want edgebench, ab, wrk, h2load or json", rf.format)
	}
	if err := applyTLSFlags(c, tf, fs); err != nil {
		return nil, err
	}
	if rf.probeInterval < 100*time.Millisecond {
		return nil, cli.Usagef("--probe-interval %v: want at least 100ms", rf.probeInterval)
	}
	if rf.auto != nil {
		switch {
		case !(*repeatRSD > 0 && *repeatRSD < 100):
			return nil, cli.Usagef("--repeat-rsd %v: want a percentage above 0 and below 100, such as 3.5", *repeatRSD)
		case *repeatMax < measure.MinAutoRuns || *repeatMax > 1000:
			return nil, cli.Usagef("--repeat-max %d: want %d..1000", *repeatMax, measure.MinAutoRuns)
		case *repeatBudget < 0:
			return nil, cli.Usagef("--repeat-budget %v: want a duration such as 10m, or 0", *repeatBudget)
		}
		rf.auto.RSDPct, rf.auto.Max, rf.auto.Budget = *repeatRSD, *repeatMax, *repeatBudget
		rf.repeat = *repeatMax
	} else if fs.Changed("repeat-rsd") || fs.Changed("repeat-max") || fs.Changed("repeat-budget") {
		return nil, cli.Usagef("--repeat-rsd, --repeat-max and --repeat-budget go with --repeat auto")
	}
	if err := rf.checkCommon(); err != nil {
		return nil, err
	}
	return rf, nil
}

func cmdRun(ctx context.Context, env *cli.Env, args []string) error {
	rf, err := parseRunFlags(args, env.Stderr, env.Getenv)
	if err != nil {
		return err
	}
	return runLoadTest(ctx, env, rf)
}

// runLoadTest runs the load test of rf --repeat times, printing each run's
// report as it ends (with the tool's lines around it, and the System
// section after it), or the JSON of all at the end; then publishes.
func runLoadTest(ctx context.Context, env *cli.Env, rf *runFlags) error {
	text := rf.format != "json"
	tl := rf.tool
	if tl == nil || !text {
		tl = &tool{}
	}
	if tl.banner != nil {
		tl.banner(env.Stdout)
	}
	lineShown := false // run's own progress line, cleared after each run
	runs, err := measure.Repeat(ctx, measure.Test{
		Load: rf.cfg, Repeat: rf.repeat, Auto: rf.auto,
		NoProbe: rf.noProbe, ProbeRoot: rf.probeRoot, Interval: rf.probeInterval, Watches: rf.watches,
		Before: func(i int) {
			switch {
			case text && rf.auto != nil:
				fmt.Fprintf(env.Stdout, "--- run %d (--repeat auto: at least %d, at most %d)\n", i+1, measure.MinAutoRuns, rf.repeat)
			case text && rf.repeat > 1:
				fmt.Fprintf(env.Stdout, "--- run %d of %d\n", i+1, rf.repeat)
			}
			if tl.before != nil {
				tl.before(env.Stdout)
			}
		},
		Progress: func(i int) func(loadgen.Progress) {
			switch {
			case tl.progress != nil:
				return tl.progress(env.Stderr)
			case rf.tool == nil && !rf.quiet && isTerminal(env.Stderr):
				lineShown = true
				return progressLine(env.Stderr, i, rf.repeat)
			}
			return nil
		},
		After: func(_ int, r measure.Run) error {
			if lineShown {
				fmt.Fprint(env.Stderr, "\r\033[K")
				lineShown = false
			}
			if w := redirectWarning(r.Load); w != "" {
				fmt.Fprintln(env.Stderr, w)
			}
			if text {
				var tr measure.ToolReport
				if rf.tool != nil {
					tr = func(w io.Writer, l *report.LoadResult) error { return rf.tool.report(w, env.Stderr, l) }
				}
				if err := measure.WriteRun(env.Stdout, r, rf.format, tr); err != nil {
					return err
				}
			}
			noteMaxTime(env.Stderr, rf.cfg, r.Load)
			if rf.tool != nil && rf.tool.files != nil {
				return rf.tool.files(r.Load)
			}
			return nil
		},
	})
	if lineShown {
		fmt.Fprint(env.Stderr, "\r\033[K")
	}
	if errors.Is(err, loadgen.ErrConfig) {
		return cli.Usagef("%v", strings.TrimPrefix(err.Error(), loadgen.ErrConfig.Error()+": "))
	}
	var de *loadgen.DialError
	if errors.As(err, &de) && rf.format == "json" {
		// Scripts get a document saying what happened, not zeros.
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		enc.Encode(struct {
			URL   string `json:"url"`
			Error string `json:"error"`
		}{rf.url, de.Error()})
	}
	if err != nil {
		if tl.failed != nil {
			tl.failed(env.Stdout)
		}
		return err
	}
	if text {
		measure.WriteSpread(env.Stdout, runs, rf.auto)
	} else if err := measure.WriteJSON(env.Stdout, runs, rf.auto, rf.labels); err != nil {
		return err
	}
	if rf.publish.publish {
		if err := publishResult(ctx, env, rf.publish, wireResult(ctx, rf, runs)); err != nil {
			return err
		}
	}
	// A server answered when a response completed or bytes came: a
	// download still flowing at the end was measured, as wrk says.
	var answered int64
	for _, r := range runs {
		answered += r.Load.Completed + r.Load.Drained.Completed + r.Load.Bytes + r.Load.Drained.Bytes
	}
	ok := measure.OK(runs)
	last := runs[len(runs)-1].Load
	switch {
	case last.Interrupted || ctx.Err() != nil:
		return &cli.ExitError{Code: 130, Msg: "interrupted"}
	case rf.tool != nil && answered == 0:
		// As ab and wrk: a server that answered, whatever its status, was
		// measured; one that never answered was not.
		return &cli.ExitError{Code: 1, Msg: fmt.Sprintf("no response (%s)", report.FailureSummary(last))}
	case rf.tool == nil && ok == 0:
		return &cli.ExitError{Code: 1, Msg: measure.NoSuccess(runs).Error()}
	}
	return nil
}

// oneURL is the one argument left after the flags, the URL; a usage
// error naming synopsis when there is none or more.
func oneURL(rest []string, synopsis string) (string, error) {
	switch len(rest) {
	case 0:
		return "", cli.Usagef("missing URL: %s", synopsis)
	case 1:
		return rest[0], nil
	}
	return "", cli.Usagef("one URL expected, got %q", rest)
}

// wireResult is the result of the runs as the agent would send it.
func wireResult(ctx context.Context, rf *runFlags, runs []measure.Run) *wire.Result {
	info, boot := measure.DeviceInfo(rf.probeRoot, version, rf.labels)
	r := measure.NewResult(measure.Origin{ID: wire.NewID(), BootID: boot, Kind: wire.KindLoadTest, At: time.Now(),
		Info: info, Labels: rf.labels})
	r.Spec = measure.SpecOf(rf.cfg, rf.repeat, rf.probeInterval, nil)
	for _, w := range rf.watches {
		r.Spec.Watch = append(r.Spec.Watch, w.String())
	}
	measure.AddRuns(r, runs)
	measure.MarkAuto(r, runs, rf.auto)
	var stop measure.Stop
	if runs[len(runs)-1].Load.Interrupted || ctx.Err() != nil {
		stop.Reason = "interrupted"
	}
	measure.Finish(r, stop, measure.NoSuccess(runs))
	return r
}

// progressLine returns a Progress callback that redraws one stderr line.
func progressLine(w io.Writer, run, runs int) func(loadgen.Progress) {
	var last int64
	var lastAt time.Duration
	prefix := ""
	if runs > 1 {
		prefix = fmt.Sprintf("run %d/%d ", run+1, runs)
	}
	return func(p loadgen.Progress) {
		if p.Warmup {
			fmt.Fprintf(w, "\r\033[K%swarm-up %.0fs", prefix, -p.Elapsed.Seconds())
			return
		}
		rate := 0.0
		if d := p.Elapsed - lastAt; d > 0 {
			rate = float64(p.Completed-last) / d.Seconds()
		}
		last, lastAt = p.Completed, p.Elapsed
		fmt.Fprintf(w, "\r\033[K%s%5.1fs  %d completed  %.0f req/s  %d errors", prefix, p.Elapsed.Seconds(), p.Completed, rate, p.Errors)
	}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// maxTimeFlag checks --max-time: 0 lifts the bound (loadgen's negative
// MaxTime); it bounds -n runs, so it makes no sense with -d.
func maxTimeFlag(fs *cli.FlagSet, c *loadgen.Config) error {
	switch {
	case c.MaxTime < 0:
		return cli.Usagef("--max-time %v: want a time such as 10m, or 0 for no bound", c.MaxTime)
	case fs.Changed("max-time") && c.Duration > 0:
		return cli.Usagef("--max-time bounds runs of -n requests: with -d the duration bounds the run")
	case c.MaxTime == 0:
		c.MaxTime = -1
	}
	return nil
}

// noteMaxTime says on stderr when --max-time ended a run of -n requests
// before they were all done.
func noteMaxTime(stderr io.Writer, c loadgen.Config, r *report.LoadResult) {
	if c.Requests == 0 || c.Duration > 0 || c.MaxTime <= 0 || r == nil || r.Drained.Cut == 0 {
		return
	}
	fmt.Fprintf(stderr, "edgebench: --max-time %v ended the run before its %d requests: %d in flight were cut\n",
		c.MaxTime, c.Requests, r.Drained.Cut)
}

// headerFlag defines the repeatable -H/--header 'Name: value' flag of
// the load-testing commands on fs.
func headerFlag(fs *cli.FlagSet, headers *[]report.Header, usage string) {
	fs.FuncP("header", "H", usage, func(s string) error {
		h, err := report.ParseHeader(s)
		if err != nil {
			return errors.New("want 'Name: value'")
		}
		*headers = append(*headers, h)
		return nil
	})
}
