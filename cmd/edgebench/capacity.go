package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/edgebench/edgebench/capacity"
	"github.com/edgebench/edgebench/capacity/loadtrial"
	"github.com/edgebench/edgebench/internal/cli"
	"github.com/edgebench/edgebench/loadgen"
)

// capacityFlags is what edgebench capacity was given.
type capacityFlags struct {
	search  capacity.Config
	run     loadtrial.Runner
	format  string
	quiet   bool
	sloText string
}

func parseCapacityFlags(args []string, env *cli.Env) (*capacityFlags, error) {
	cf := &capacityFlags{}
	fs := cli.NewFlagSet("capacity", "edgebench capacity --slo 'p99<50ms,errors<0.1%' [flags] URL", env.Stderr)
	s, c := &cf.search, &cf.run.Load
	fs.StringVar(&cf.sloText, "slo", "", "the objective every trial must meet: conditions on p50, p90, p99, p99.9, max (a duration), errors and timeouts (a ratio), comma-separated, e.g. 'p99<50ms,errors<0.1%' (required)")
	fs.Float64Var(&s.Start, "start", 50, "the first trial's rate, requests/s")
	fs.Float64Var(&s.MaxRate, "max-rate", 1e6, "the highest rate tried, requests/s")
	fs.Float64Var(&s.MinRate, "min-rate", 1, "below this rate the search gives up, requests/s")
	fs.Float64Var(&s.Growth, "growth", 2, "the ramp's factor from one trial to the next")
	tol := fs.String("tolerance", "5%", "the bisection stops when the best passing and the lowest failing rates are this close (relative)")
	fs.DurationVar(&s.Warmup, "warmup", 2*time.Second, "each trial's warm-up, not measured")
	fs.DurationVar(&s.Duration, "trial", 5*time.Second, "each trial's measured window")
	fs.DurationVar(&s.Final, "final", 15*time.Second, "the final trial's window, which confirms the answer")
	fs.DurationVar(&s.Budget, "budget", 0, "stop the search before its trials take longer than this (0: no limit)")
	fs.IntVar(&s.MaxTrials, "max-trials", 40, "the most trials")
	fs.IntVarP(&c.Connections, "connections", "c", 64, "connections; each carries one request at a time, so at least rate x latency are needed")
	fs.IntVarP(&c.Threads, "threads", "t", 0, "threads, as wrk's (0: one per CPU); at most one event loop per CPU runs them")
	fs.BoolVarP(&c.KeepAlive, "keepalive", "k", true, "keep-alive (-k=false: a new connection per request)")
	headerFlag(fs, &c.Headers, "request header `'Name: value'` (repeatable)")
	fs.StringVarP(&c.Method, "method", "m", "GET", "request method")
	fs.DurationVar(&c.Timeout, "timeout", 2*time.Second, "idle timeout of a request, as run's")
	watchFlag(fs, &cf.run.Watches, "server process `NAME|PID` whose CPU each trial counts as the server's, with what listens on the target's port and its upstreams (repeatable)")
	fs.StringVar(&cf.run.ProbeRoot, "probe-root", "/", "read /proc and /sys below this folder")
	fs.StringVar(&cf.format, "format", "text", "text or json")
	fs.BoolVarP(&cf.quiet, "quiet", "q", false, "no live progress line")
	tf := addTLSFlags(fs, c, true)
	rest, err := fs.Parse(args)
	if err != nil {
		return nil, err
	}
	if c.URL, err = oneURL(rest, "edgebench capacity --slo 'p99<50ms' [flags] URL"); err != nil {
		return nil, err
	}
	if cf.sloText == "" {
		return nil, cli.Usagef("--slo is required, e.g. --slo 'p99<50ms,errors<0.1%%'")
	}
	if s.SLO, err = capacity.ParseSLO(cf.sloText); err != nil {
		return nil, cli.Usagef("--slo: %v", err)
	}
	if s.Tolerance, err = capacity.ParseTolerance(*tol); err != nil {
		return nil, cli.Usagef("--tolerance %q: %v", *tol, err)
	}
	switch {
	case s.Duration <= 0:
		return nil, cli.Usagef("--trial %v: want a window such as 5s", s.Duration)
	case s.Final < s.Duration:
		return nil, cli.Usagef("--final %v: want at least the trial's %v", s.Final, s.Duration)
	case c.Connections < 1:
		return nil, cli.Usagef("-c %d: want at least 1 connection", c.Connections)
	case c.Timeout <= 0:
		return nil, cli.Usagef("--timeout %v: want a timeout such as 2s", c.Timeout)
	case s.Warmup < 0:
		return nil, cli.Usagef("--warmup %v: want 0 or more", s.Warmup)
	case cf.format != "text" && cf.format != "json":
		return nil, cli.Usagef("--format %q: want text or json", cf.format)
	}
	if one := s.Warmup + s.Duration; s.Budget > 0 && s.Budget < one {
		// Known before anything runs: the search could not run a trial.
		return nil, cli.Usagef("--budget %v: shorter than one trial (%v warm-up + %v), want at least %v", s.Budget, s.Warmup, s.Duration, one)
	}
	if s.Warmup == 0 {
		s.Warmup = -1 // none, not the default
	}
	if _, err := capacity.New(*s); err != nil {
		return nil, cli.Usagef("%v", err)
	}
	if err := applyTLSFlags(c, tf, fs); err != nil {
		return nil, err
	}
	// The engine checks the rest once: a trial at the first rate.
	probeCfg := *c
	probeCfg.Rate, probeCfg.Duration = s.Start, time.Second
	if _, err := loadgen.Request(probeCfg); err != nil {
		return nil, cli.Usagef("%v", strings.TrimPrefix(err.Error(), loadgen.ErrConfig.Error()+": "))
	}
	return cf, nil
}

func cmdCapacity(ctx context.Context, env *cli.Env, args []string) error {
	cf, err := parseCapacityFlags(args, env)
	if err != nil {
		return err
	}
	text := cf.format == "text"
	s, err := capacity.New(cf.search)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	cfg := s.Config()
	if text {
		fmt.Fprintf(env.Stdout, "capacity of %s under %s (tolerance %.3g %%, trials %v + %v warm-up, final %v)\n",
			cf.run.Load.URL, cfg.SLO, cfg.Tolerance*100, cfg.Duration, max(cfg.Warmup, 0), cfg.Final)
		fmt.Fprintln(env.Stdout, capacity.TrialHeader)
	}
	shown := false
	if text && !cf.quiet && isTerminal(env.Stderr) {
		cf.run.Progress = func(t capacity.Trial) func(loadgen.Progress) {
			shown = true
			return func(p loadgen.Progress) {
				fmt.Fprintf(env.Stderr, "\r\033[Ktrial %d at %.0f req/s: %.0fs, %d completed", t.N, t.Rate, p.Elapsed.Seconds(), p.Completed)
			}
		}
	}
	var dead string
	run := loadtrial.StopIfDead(cf.run, &dead)
	res, err := capacity.Drive(ctx, s, run, func(r capacity.Record) {
		if shown {
			fmt.Fprint(env.Stderr, "\r\033[K")
			shown = false
		}
		if text {
			capacity.WriteTrial(env.Stdout, capacity.TrialOf(r))
		}
	})
	if shown {
		fmt.Fprint(env.Stderr, "\r\033[K")
	}
	switch {
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		return &cli.ExitError{Code: 130, Msg: "interrupted"}
	case errors.Is(err, loadgen.ErrConfig):
		return cli.Usagef("%v", strings.TrimPrefix(err.Error(), loadgen.ErrConfig.Error()+": "))
	case errors.Is(err, loadtrial.ErrDeadTarget):
	case err != nil:
		return err
	}
	rep := res.Report(cfg)
	if dead != "" {
		rep.LimitedBy, rep.Answer = "errors", "none measured: "+dead
	}
	if !text {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		capacity.WriteAnswer(env.Stdout, rep)
	}
	switch {
	case dead != "":
		return &cli.ExitError{Code: 1, Msg: dead}
	case rep.CapacityRPS == 0:
		// No rate met the SLO, or none did before the budget ran out: not
		// an answer a script may read as 0 req/s.
		return &cli.ExitError{Code: 1, Msg: rep.Answer}
	}
	return nil
}
