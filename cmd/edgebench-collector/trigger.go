package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/edgebench/edgebench/capacity"
	"github.com/edgebench/edgebench/collector"
	"github.com/edgebench/edgebench/collector/client"
	"github.com/edgebench/edgebench/collector/escape"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/scheduledb"
	"github.com/edgebench/edgebench/internal/cli"
	"github.com/edgebench/edgebench/internal/tlsflags"
	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/wire"
)

// triggerConfig is what `trigger` was asked to do.
// defaultServer is the collector's web address trigger and cancel use.
const defaultServer = "http://127.0.0.1:8080"

type triggerConfig struct {
	server  string
	token   string
	req     scheduledb.TriggerRequest
	wait    bool
	maxWait time.Duration
}

func parseTrigger(args []string, env *cli.Env) (*triggerConfig, error) {
	tc := &triggerConfig{}
	fs := cli.NewFlagSet("trigger", "edgebench-collector trigger [--device ID [--target-device ID] | --fleet F | --select k=v] [capacity --slo 'p99<50ms'] URL [loadtest flags]\n"+
		"       edgebench-collector trigger --device ID serve [--addr ADDR] [--dir DIR] [-d 10m]", env.Stderr)
	fs.StringVar(&tc.server, "server", defaultServer, "the running collector's web address")
	tokenFile := fs.String("api-token-file", "", "file holding the collector API's token (or EDGEBENCH_API_TOKEN)")
	r := &tc.req
	sel := cli.Pairs{}
	labels := cli.Pairs{}
	fs.StringVar(&r.Device, "device", "", "this device")
	fs.StringVar(&r.Fleet, "fleet", "", "every device of this fleet (or, with --device/--select, the fleet they are in)")
	fs.Var(sel, "select", "devices whose label or system-info field k is v (repeatable: all must match)")
	fs.StringVar(&r.TargetDevice, "target-device", "", "a run across two devices: --device loads the URL, device `ID` serves it and watches itself; the result is its")
	fs.StringVar(&r.TargetFleet, "target-fleet", "", "--target-device's `FLEET` (default: the loader's)")
	fs.Func("watch", "the server's processes, by `NAME|PID` (repeatable); with --target-device, the target's (default: what listens on the URL's port there)", func(s string) error {
		if s == "" {
			return errors.New("want a process name or PID")
		}
		r.Spec.Watch = append(r.Spec.Watch, s)
		return nil
	})
	serve := &wire.ServeSpec{}
	fs.StringVar(&serve.Addr, "addr", "", "serve: the `ADDR:PORT` the built-in target listens on, within the device's policy.serve_allow (default: the agent's, 127.0.0.1:8080)")
	fs.StringVar(&serve.Dir, "dir", "", "serve: the `DIR` of files it serves, below the device's policy.serve_root (default: the synthetic endpoints only)")
	sp := &r.Spec
	fs.IntVarP(&sp.Connections, "connections", "c", 10, "connections")
	fs.Int64VarP(&sp.Requests, "requests", "n", 0, "requests (0: no limit)")
	d := fs.DurationP("duration", "d", 10*time.Second, "duration, e.g. 30s, 2m or 30")
	fs.IntVarP(&sp.Threads, "threads", "t", 0, "event loops, as wrk's threads (0: one per CPU)")
	fs.BoolVarP(&sp.KeepAlive, "keepalive", "k", true, "keep-alive, the default as in wrk (-k=false: off)")
	fs.BoolFunc("no-keepalive", "a new connection per request, as ab without -k", func(s string) error {
		off, err := strconv.ParseBool(s)
		sp.KeepAlive = !off
		return err
	})
	fs.FuncP("header", "H", "request header `'Name: value'` (repeatable)", func(s string) error {
		h, err := report.ParseHeader(s)
		if err != nil {
			return errors.New("want 'Name: value'")
		}
		sp.Headers = append(sp.Headers, wire.Header{Name: h.Name, Value: h.Value})
		return nil
	})
	fs.StringVarP(&sp.Method, "method", "m", "GET", "method")
	body := fs.String("body", "", "request body; @FILE reads FILE")
	timeout := fs.Duration("timeout", 2*time.Second, "per-request timeout")
	fs.Float64Var(&sp.Rate, "rate", 0, "open loop: requests/s")
	warmup := fs.Duration("warmup", 0, "warm-up excluded from the statistics")
	sp.Repeat = 1
	fs.Func("repeat", "`N|auto`: runs per device (default 1); auto: at least 3, more while req/s (p99 with --rate) varies by more than --repeat-rsd, at most --repeat-max, within --repeat-budget", func(s string) error {
		if s == "auto" {
			sp.RepeatAuto = true
			return nil
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			return errors.New("want a number of runs or auto")
		}
		sp.RepeatAuto, sp.Repeat = false, n
		return nil
	})
	fs.Float64Var(&sp.RepeatRSDPct, "repeat-rsd", 3.5, "--repeat auto: the relative standard deviation of req/s (p99 with --rate), in %, at which the runs are stable")
	repeatMax := fs.Int("repeat-max", 10, "--repeat auto: the most runs")
	repeatBudget := fs.Duration("repeat-budget", 10*time.Minute, "--repeat auto: no new run after this time (0: no limit)")
	fs.Var(labels, "label", "label k=v on the results (repeatable)")
	fs.BoolVar(&sp.Queue, "queue", false, "queue behind a running test instead of being rejected")
	fs.DurationVar(&r.TTL, "ttl", 10*time.Minute, "the command expires after this long")
	fs.BoolVar(&tc.wait, "wait", false, "show each device's progress and print the comparison when all are done")
	fs.DurationVar(&tc.maxWait, "max-wait", time.Hour, "give up waiting after this long")
	// The TLS and HTTP/2 flags of edgebench run, sent with the command:
	// the CA bundle's certificates, never a key.
	tf := tlsflags.Add(fs, tlsflags.Options{}, true)
	cp := &wire.CapacitySpec{}
	fs.StringVar(&cp.SLO, "slo", "", "capacity: the objective of every trial, e.g. 'p99<50ms,errors<0.1%'")
	fs.Float64Var(&cp.StartRate, "start", 0, "capacity: the first trial's rate (0: the device's default, 50)")
	fs.Float64Var(&cp.MaxRate, "max-rate", 0, "capacity: the highest rate tried (0: the device's cap)")
	fs.Func("tolerance", "capacity: relative tolerance of the answer, `5%|0.05` as edgebench capacity's (default: the device's, 5%)", func(s string) (err error) {
		cp.Tolerance, err = capacity.ParseTolerance(s)
		return err
	})
	trial := fs.Duration("trial", 0, "capacity: each trial's window (0: 5s)")
	final := fs.Duration("final", 0, "capacity: the final trial's window (0: 3 trials)")
	budget := fs.Duration("budget", 0, "capacity: the search's total time (0: the device's cap)")
	rest, err := fs.Parse(args)
	if err != nil {
		return nil, err
	}
	// "serve" starts the built-in target on the devices: no load.
	if i := slices.Index(rest, "serve"); i >= 0 {
		rest = slices.Delete(rest, i, i+1)
		if len(rest) > 0 {
			return nil, cli.Usagef("serve takes no URL: edgebench-collector trigger --device ID serve [--addr ADDR] [--dir DIR] [-d 10m]")
		}
		for _, f := range []string{"target-device", "slo", "rate", "repeat", "requests", "body"} {
			if fs.Changed(f) {
				return nil, cli.Usagef("--%s is not for serve, which starts the built-in target and loads nothing", f)
			}
		}
		serve.DurationMS = 10 * time.Minute.Milliseconds()
		if fs.Changed("duration") {
			serve.DurationMS = d.Milliseconds()
		}
		if serve.DurationMS <= 0 {
			return nil, cli.Usagef("serve: -d must be positive")
		}
		if r.Device == "" && r.Fleet == "" && len(sel) == 0 {
			return nil, cli.Usagef("say which devices: --device ID, --fleet F or --select k=v")
		}
		if r.Device != "" && len(sel) > 0 {
			return nil, cli.Usagef("--device and --select exclude each other")
		}
		if len(sel) > 0 {
			r.Select = sel
		}
		if tc.token, err = apiToken(*tokenFile, env.Getenv); err != nil {
			return nil, err
		}
		r.Serve, r.Spec = serve, wire.LoadTestSpec{}
		return tc, nil
	}
	if fs.Changed("addr") || fs.Changed("dir") {
		return nil, cli.Usagef("--addr and --dir are serve's: edgebench-collector trigger --device ID serve --addr ADDR")
	}
	// "capacity" before or after the URL makes the command a capacity
	// search, as edgebench capacity runs it.
	if i := slices.Index(rest, "capacity"); i >= 0 {
		rest = slices.Delete(rest, i, i+1)
		if cp.SLO == "" {
			return nil, cli.Usagef("capacity needs --slo, e.g. --slo 'p99<50ms,errors<0.1%%'")
		}
		if fs.Changed("repeat") || fs.Changed("repeat-rsd") || fs.Changed("repeat-max") || fs.Changed("repeat-budget") {
			// The device would run one search and drop them.
			return nil, cli.Usagef("--repeat is not for capacity: a capacity search re-measures within its search; use run for repeats (trigger ... --repeat auto URL)")
		}
		if _, err := capacity.ParseSLO(cp.SLO); err != nil {
			return nil, cli.Usagef("--slo: %v", err)
		}
		for _, f := range []struct {
			name string
			bad  bool
		}{{"--start", cp.StartRate < 0}, {"--max-rate", cp.MaxRate < 0}, {"--trial", *trial < 0}, {"--final", *final < 0}, {"--budget", *budget < 0}} {
			if f.bad {
				return nil, cli.Usagef("capacity: %s: want 0 (the device's default) or more", f.name)
			}
		}
		cp.TrialMS, cp.FinalMS, cp.BudgetMS = trial.Milliseconds(), final.Milliseconds(), budget.Milliseconds()
		r.Capacity = cp
	} else if cp.SLO != "" {
		slo := cp.SLO
		if len(slo) > 80 {
			slo = slo[:80] + "..."
		}
		return nil, cli.Usagef("--slo is for a capacity search: trigger ... capacity --slo '%s' URL", slo)
	}
	if len(rest) != 1 {
		return nil, cli.Usagef("want one URL: edgebench-collector trigger [select] URL [flags]")
	}
	if tc.token, err = apiToken(*tokenFile, env.Getenv); err != nil {
		return nil, err
	}
	sp.URL = rest[0]
	if u, err := url.Parse(sp.URL); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, cli.Usagef("URL %q: want http://host[:port]/path", sp.URL)
	}
	if r.Device == "" && r.Fleet == "" && len(sel) == 0 {
		return nil, cli.Usagef("say which devices: --device ID, --fleet F or --select k=v")
	}
	if r.Device != "" && len(sel) > 0 {
		return nil, cli.Usagef("--device and --select exclude each other")
	}
	if len(sel) > 0 {
		r.Select = sel
	}
	if err := r.CheckKinds(); err != nil {
		return nil, cli.Usagef("%v", err)
	}
	if sp.RepeatAuto {
		if !(sp.RepeatRSDPct > 0 && sp.RepeatRSDPct < 100) || *repeatMax < 3 || *repeatMax > 1000 || *repeatBudget < 0 {
			return nil, cli.Usagef("--repeat auto: want --repeat-rsd above 0 and below 100, --repeat-max 3..1000 (as run's), --repeat-budget 0 or more")
		}
		sp.Repeat, sp.RepeatBudgetMS = *repeatMax, repeatBudget.Milliseconds()
	} else if fs.Changed("repeat-rsd") || fs.Changed("repeat-max") || fs.Changed("repeat-budget") {
		return nil, cli.Usagef("--repeat-rsd, --repeat-max and --repeat-budget go with --repeat auto")
	} else {
		sp.RepeatRSDPct = 0
	}
	if sp.Connections < 1 || sp.Repeat < 1 || *d < 0 || *timeout <= 0 {
		return nil, cli.Usagef("-c, --repeat and --timeout must be positive")
	}
	sp.DurationMS, sp.TimeoutMS, sp.WarmupMS = d.Milliseconds(), timeout.Milliseconds(), warmup.Milliseconds()
	if sp.Requests > 0 && !fs.Changed("duration") {
		sp.DurationMS = 0
	}
	if strings.HasPrefix(*body, "@") {
		b, err := os.ReadFile((*body)[1:])
		if err != nil {
			return nil, cli.Usagef("--body: %v", err)
		}
		sp.Body = b
	} else if *body != "" {
		sp.Body = []byte(*body)
	}
	for k, v := range labels {
		sp.Labels = append(sp.Labels, wire.Label{K: k, V: v})
	}
	t, err := tf.Apply(sp.URL, sp.KeepAlive, fs)
	if err != nil {
		return nil, err
	}
	sp.HTTP2 = t.HTTP2
	if t.Streams > 1 {
		sp.Streams = t.Streams
	}
	if len(t.CACerts) > 0 || t.Insecure || t.NoResume || t.Version != 0 {
		switch {
		case len(t.CACerts) > wire.MaxCABundle:
			return nil, cli.Usagef("--cacert %s: %d bytes, a command carries at most %d", tf.CACert(), len(t.CACerts), wire.MaxCABundle)
		case len(t.CACerts) > 0:
			if err := wire.CheckCACerts(t.CACerts); err != nil {
				return nil, cli.Usagef("--cacert %s: %v", tf.CACert(), err)
			}
		}
		sp.TLS = &wire.TLSSpec{CACerts: t.CACerts, Insecure: t.Insecure, NoResume: t.NoResume, Version: report.TLSVersionName(t.Version)}
	}
	return tc, nil
}

func cmdTrigger(ctx context.Context, env *cli.Env, args []string) error {
	tc, err := parseTrigger(args, env)
	if err != nil {
		return err
	}
	return runTrigger(ctx, env.Stdout, tc)
}

// runTrigger asks the running collector to send the command and, with
// --wait, follows its events until every device has finished.
func runTrigger(ctx context.Context, w io.Writer, tc *triggerConfig) error {
	api := client.New(tc.server, tc.token)
	t, err := api.Trigger(ctx, tc.req)
	if err != nil {
		return fmt.Errorf("trigger: %w", err)
	}
	switch {
	case t.Pair != nil:
		fmt.Fprintf(w, "run across two devices %s: %s loads, %s serves and watches itself (watch %s sent to %s)\n",
			t.CommandID, t.Pair.Loader, t.Pair.Target, t.Pair.WatchID, strings.Join(t.Topics, ", "))
	default:
		fmt.Fprintf(w, "command %s sent to %s\n", t.CommandID, strings.Join(t.Topics, ", "))
		if len(t.Devices) > 0 {
			fmt.Fprintf(w, "expecting %d devices: %s\n", len(t.Devices), strings.Join(t.Devices, ", "))
		}
	}
	if !tc.wait {
		return nil
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, tc.maxWait)
	defer cancel()
	printed := map[string]bool{}
	final := map[string]wire.Event{}
	var st collector.CommandStatus
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	waited := true // every device answered within --max-wait
wait:
	for {
		poll, err := api.Command(ctx, t.CommandID)
		if err != nil {
			if ctx.Err() != nil {
				waited = false
				break wait
			}
			return fmt.Errorf("wait: %w", err)
		}
		st = poll
		for _, e := range st.Events {
			key := fmt.Sprintf("%s/%s#%d", e.Fleet, e.Device, e.Seq)
			if printed[key] {
				continue
			}
			printed[key] = true
			line := fmt.Sprintf("%s/%s: %s", e.Fleet, e.Device, e.State)
			if p := e.Progress; p != nil {
				line += fmt.Sprintf(" %.1fs %d requests %.1f req/s", float64(p.ElapsedMS)/1000, p.Completed, p.RPS)
			}
			if e.Reason != "" {
				line += " (" + escape.Printable(e.Reason) + ")"
			}
			if e.ResultID != "" {
				line += " result " + escape.Printable(e.ResultID)
			}
			fmt.Fprintln(w, line)
			if e.State.Terminal() {
				final[e.Fleet+"/"+e.Device] = wire.Event{State: e.State, Reason: e.Reason}
			}
		}
		if st.Pair != nil && store.PairDone(st.Pair.State) || st.Pair == nil && (tc.req.Serve != nil && serving(t.Devices, final, st) ||
			tc.req.Serve == nil && allDone(t.Devices, final, st)) {
			break
		}
		select {
		case <-ctx.Done():
			waited = false
			break wait
		case <-tick.C:
		}
	}
	succeeded := false
	for _, e := range final {
		succeeded = succeeded || e.State == wire.StateSucceeded
	}
	if st.Pair != nil { // the run's, not each device's
		succeeded = st.Pair.State == store.PairSucceeded
	}
	if waited && succeeded && tc.req.Serve == nil {
		fmt.Fprintln(w)
		if err := api.Text(ctx, "/api/compare?by=device&cmd="+url.QueryEscape(t.CommandID), w); err != nil {
			return fmt.Errorf("compare: %w", err)
		}
	}
	if parent.Err() != nil { // Ctrl-C: the devices go on unless told
		how := "edgebench-collector cancel " + t.CommandID
		if tc.server != defaultServer {
			how += " --server " + tc.server
		}
		return &cli.ExitError{Code: 130, Msg: "interrupted: the test goes on on the devices; stop it with: " + how}
	}
	if t.Pair != nil {
		return pairOutcome(w, t.Pair, st.Pair, waited, tc.maxWait)
	}
	if tc.req.Serve != nil && waited {
		return serveOutcome(w, t.Devices, final)
	}
	failures := outcomes(t.Devices, final, st, tc.maxWait)
	if len(t.Devices) == 0 && len(final) == 0 {
		return fmt.Errorf("no device answered within %v (--max-wait)", tc.maxWait)
	}
	if len(failures) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	for _, f := range failures {
		fmt.Fprintln(w, f)
	}
	return fmt.Errorf("%d of %d devices did not succeed", len(failures), max(len(t.Devices), len(final)))
}

// outcomes is a line for each device that did not succeed, saying why:
// it rejected the command, failed, timed out or was cancelled (with the
// device's reason), never answered within maxWait, or its result has not
// reached the collector.
func outcomes(devices []string, final map[string]wire.Event, st collector.CommandStatus, maxWait time.Duration) []string {
	stored := map[string]bool{}
	for _, r := range st.Results {
		stored[r.Fleet+"/"+r.Device] = true
	}
	all := append([]string(nil), devices...)
	for d := range final {
		if !slices.Contains(all, d) {
			all = append(all, d)
		}
	}
	sort.Strings(all)
	var lines []string
	for _, d := range all {
		e, ok := final[d]
		why := ""
		switch {
		case !ok:
			why = fmt.Sprintf("no answer within %v (--max-wait)", maxWait)
		case e.State == wire.StateSucceeded && !stored[d]:
			why = fmt.Sprintf("succeeded, but its result did not reach the collector within %v", maxWait)
		case e.State == wire.StateSucceeded:
			continue
		default:
			why = string(e.State)
			if e.Reason != "" {
				why += ": " + escape.Printable(e.Reason)
			}
		}
		lines = append(lines, d+": "+why)
	}
	return lines
}

// pairOutcome says how a run across two devices ended, and fails unless
// its joined result was stored: a line with the reason why not.
func pairOutcome(w io.Writer, info *collector.PairInfo, p *store.Pair, waited bool, maxWait time.Duration) error {
	switch {
	case !waited || p == nil:
		return fmt.Errorf("the run across two devices did not end within %v (--max-wait)", maxWait)
	case p.State == store.PairSucceeded:
		fmt.Fprintf(w, "\nresult %s of %s, loaded from %s\n", escape.Printable(p.ResultID), info.Target, info.Loader)
		return nil
	}
	why := string(p.State)
	if p.Reason != "" {
		why += ": " + escape.Printable(p.Reason)
	}
	fmt.Fprintf(w, "\nthe run across two devices %s: nothing stored\n", why)
	return fmt.Errorf("the run across two devices %s", why)
}

// serving reports whether every expected device serves (its last event is
// running) or has ended the command.
func serving(devices []string, final map[string]wire.Event, st collector.CommandStatus) bool {
	if len(devices) == 0 {
		return false
	}
	last := map[string]wire.EventState{}
	for _, e := range st.Events {
		last[e.Fleet+"/"+e.Device] = e.State
	}
	for _, d := range devices {
		if _, done := final[d]; !done && last[d] != wire.StateRunning {
			return false
		}
	}
	return true
}

// serveOutcome fails when a device refused to serve or stopped.
func serveOutcome(w io.Writer, devices []string, final map[string]wire.Event) error {
	var bad []string
	for _, d := range devices {
		if e, ok := final[d]; ok && e.State != wire.StateSucceeded {
			line := d + ": " + string(e.State)
			if e.Reason != "" {
				line += ": " + escape.Printable(e.Reason)
			}
			bad = append(bad, line)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	for _, b := range bad {
		fmt.Fprintln(w, b)
	}
	return fmt.Errorf("%d of %d devices do not serve", len(bad), len(devices))
}

// allDone reports whether every expected device has a terminal event and,
// where it succeeded, its result is stored.
func allDone(devices []string, final map[string]wire.Event, st collector.CommandStatus) bool {
	if len(devices) == 0 {
		return false
	}
	stored := map[string]bool{}
	for _, r := range st.Results {
		stored[r.Fleet+"/"+r.Device] = true
	}
	for _, d := range devices {
		e, ok := final[d]
		if !ok || (e.State == wire.StateSucceeded && !stored[d]) {
			return false
		}
	}
	return true
}
