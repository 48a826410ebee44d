package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/edgebench/edgebench/collector"
	"github.com/edgebench/edgebench/transport"
)

// triggerConfig is what `trigger` was asked to do.
type triggerConfig struct {
	server  string
	token   string
	req     collector.TriggerRequest
	wait    bool
	maxWait time.Duration
}

func parseTrigger(args []string, env *cliEnv) (*triggerConfig, error) {
	tc := &triggerConfig{}
	fs := newFlagSet("trigger", "edgebench-collector trigger [--device ID | --fleet F | --select k=v] URL [loadtest flags]", env.stderr)
	fs.StringVar(&tc.server, "server", "http://127.0.0.1:8080", "the running collector's web address")
	tokenFile := fs.String("api-token-file", "", "file holding the collector API's token (or EDGEBENCH_API_TOKEN)")
	r := &tc.req
	sel := kvValue{}
	labels := kvValue{}
	var headers listValue
	fs.StringVar(&r.Device, "device", "", "this device")
	fs.StringVar(&r.Fleet, "fleet", "", "every device of this fleet (or, with --device/--select, the fleet they are in)")
	fs.Var(sel, "select", "devices whose label or system-info field k is v (repeatable: all must match)")
	sp := &r.Spec
	fs.IntVar(&sp.Connections, "c", 10, "connections")
	fs.Int64Var(&sp.Requests, "n", 0, "requests (0: no limit)")
	d := fs.Duration("d", 10*time.Second, "duration")
	fs.IntVar(&sp.Threads, "t", 0, "threads (accepted for wrk compatibility)")
	fs.Bool("k", true, "keep-alive (the default)")
	fs.Bool("keepalive", true, "keep-alive (the default)")
	noKeep := fs.Bool("no-keepalive", false, "a new connection per request")
	fs.Var(&headers, "H", "request header 'Name: value' (repeatable)")
	fs.StringVar(&sp.Method, "m", "GET", "method")
	body := fs.String("body", "", "request body; @FILE reads FILE")
	timeout := fs.Duration("timeout", 2*time.Second, "per-request timeout")
	fs.Float64Var(&sp.Rate, "rate", 0, "open loop: requests/s")
	warmup := fs.Duration("warmup", 0, "warm-up excluded from the statistics")
	fs.IntVar(&sp.Repeat, "repeat", 1, "runs per device")
	fs.Var(labels, "label", "label k=v on the results (repeatable)")
	fs.BoolVar(&sp.Queue, "queue", false, "queue behind a running test instead of being rejected")
	fs.DurationVar(&r.TTL, "ttl", 10*time.Minute, "the command expires after this long")
	fs.BoolVar(&tc.wait, "wait", false, "show each device's progress and print the comparison when all are done")
	fs.DurationVar(&tc.maxWait, "max-wait", time.Hour, "give up waiting after this long")
	rest, err := fs.parse(args)
	if err != nil {
		return nil, err
	}
	if len(rest) != 1 {
		return nil, usagef("want one URL: edgebench-collector trigger [select] URL [flags]")
	}
	if tc.token, err = apiToken(*tokenFile, env.getenv); err != nil {
		return nil, err
	}
	sp.URL = rest[0]
	if u, err := url.Parse(sp.URL); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, usagef("URL %q: want http://host[:port]/path", sp.URL)
	}
	if r.Device == "" && r.Fleet == "" && len(sel) == 0 {
		return nil, usagef("say which devices: --device ID, --fleet F or --select k=v")
	}
	if r.Device != "" && len(sel) > 0 {
		return nil, usagef("--device and --select exclude each other")
	}
	if len(sel) > 0 {
		r.Select = sel
	}
	if sp.Connections < 1 || sp.Repeat < 1 || *d < 0 || *timeout <= 0 {
		return nil, usagef("-c, --repeat and --timeout must be positive")
	}
	sp.DurationMS, sp.TimeoutMS, sp.WarmupMS = d.Milliseconds(), timeout.Milliseconds(), warmup.Milliseconds()
	if sp.Requests > 0 && !flagGiven(fs, "d") {
		sp.DurationMS = 0
	}
	sp.KeepAlive = !*noKeep
	for _, h := range headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, usagef("-H %q: want 'Name: value'", h)
		}
		sp.Headers = append(sp.Headers, transport.Header{Name: strings.TrimSpace(name), Value: strings.TrimSpace(value)})
	}
	if strings.HasPrefix(*body, "@") {
		b, err := os.ReadFile((*body)[1:])
		if err != nil {
			return nil, usagef("--body: %v", err)
		}
		sp.Body = b
	} else if *body != "" {
		sp.Body = []byte(*body)
	}
	for k, v := range labels {
		sp.Labels = append(sp.Labels, transport.Label{K: k, V: v})
	}
	return tc, nil
}

// flagGiven reports whether flag name was given.
func flagGiven(fs *flagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

func cmdTrigger(ctx context.Context, env *cliEnv, args []string) error {
	tc, err := parseTrigger(args, env)
	if err != nil {
		return err
	}
	return runTrigger(ctx, env.stdout, tc)
}

// runTrigger asks the running collector to send the command and, with
// --wait, follows its events until every device has finished.
func runTrigger(ctx context.Context, w io.Writer, tc *triggerConfig) error {
	hc := &http.Client{Timeout: 30 * time.Second}
	if tc.token != "" {
		hc.Transport = tokenTransport{tc.token}
	}
	body, err := json.Marshal(tc.req)
	if err != nil {
		return err
	}
	base := strings.TrimSuffix(tc.server, "/")
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/trigger", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	var t collector.Triggered
	if err := doJSON(hc, req, &t); err != nil {
		return fmt.Errorf("trigger: %w", err)
	}
	fmt.Fprintf(w, "command %s sent to %s\n", t.CommandID, strings.Join(t.Topics, ", "))
	if len(t.Devices) > 0 {
		fmt.Fprintf(w, "expecting %d devices: %s\n", len(t.Devices), strings.Join(t.Devices, ", "))
	}
	if !tc.wait {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, tc.maxWait)
	defer cancel()
	printed := map[string]bool{}
	final := map[string]transport.EventState{}
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/commands/"+url.PathEscape(t.CommandID), nil)
		if err != nil {
			return err
		}
		var st collector.CommandStatus
		if err := doJSON(hc, req, &st); err != nil {
			return fmt.Errorf("wait: %w", err)
		}
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
				line += " (" + e.Reason + ")"
			}
			if e.ResultID != "" {
				line += " result " + e.ResultID
			}
			fmt.Fprintln(w, line)
			if e.State.Terminal() {
				final[e.Fleet+"/"+e.Device] = e.State
			}
		}
		if allDone(t.Devices, final, st) {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait: %d of %d devices finished: %w", len(final), len(t.Devices), ctx.Err())
		case <-tick.C:
		}
	}
	fmt.Fprintln(w)
	req, err = http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/compare?by=device&cmd="+url.QueryEscape(t.CommandID), nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	defer resp.Body.Close()
	_, err = io.Copy(w, resp.Body)
	return err
}

// allDone reports whether every expected device has a terminal event and,
// where it succeeded, its result is stored.
func allDone(devices []string, final map[string]transport.EventState, st collector.CommandStatus) bool {
	if len(devices) == 0 {
		return false
	}
	stored := map[string]bool{}
	for _, r := range st.Results {
		stored[r.Fleet+"/"+r.Device] = true
	}
	for _, d := range devices {
		s, ok := final[d]
		if !ok || (s == transport.StateSucceeded && !stored[d]) {
			return false
		}
	}
	return true
}

func doJSON(hc *http.Client, req *http.Request, v any) error {
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	return json.Unmarshal(b, v)
}
