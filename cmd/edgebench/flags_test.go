package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgebench/edgebench/loadgen"
	"github.com/edgebench/edgebench/loadgen/report"
)

// TestRunParsesTheSeedsCommandLines parses the command lines of the seeds' write-ups and
// README as people type them for ab and wrk, with run in front.
func TestRunParsesTheSeedsCommandLines(t *testing.T) {
	const u = "http://127.0.0.1/"
	for _, tc := range []struct {
		args []string
		want func(c loadgen.Config, rf *runFlags) bool
	}{
		{[]string{"-t10", "-c10", "-d30s", "--format", "wrk", u}, func(c loadgen.Config, rf *runFlags) bool {
			return c.Threads == 10 && c.Connections == 10 && c.Duration == 30*time.Second && rf.format == "wrk" && c.KeepAlive
		}},
		{[]string{"-t10", "-c500", "-d30s", "--latency", u}, func(c loadgen.Config, _ *runFlags) bool {
			return c.Threads == 10 && c.Connections == 500 && c.Duration == 30*time.Second
		}},
		{[]string{"-c5000", "-n50000", u}, func(c loadgen.Config, _ *runFlags) bool {
			return c.Connections == 5000 && c.Requests == 50000 && c.Duration == 0
		}},
		{[]string{"-c5000", "-n50000", "-k", u}, func(c loadgen.Config, _ *runFlags) bool {
			return c.Connections == 5000 && c.Requests == 50000 && c.KeepAlive
		}},
		{[]string{"-n", "1000", "-c", "5", u}, func(c loadgen.Config, _ *runFlags) bool { return c.Requests == 1000 && c.Connections == 5 }},
		{[]string{u, "-c5000", "-d", "30"}, func(c loadgen.Config, _ *runFlags) bool {
			return c.Connections == 5000 && c.Duration == 30*time.Second
		}},
		// The shell passes -H'Host: x' as one word.
		{[]string{"-HHost: x", "-H", "Accept: */*", u}, func(c loadgen.Config, _ *runFlags) bool {
			return slices.Equal(c.Headers, []report.Header{{Name: "Host", Value: "x"}, {Name: "Accept", Value: "*/*"}})
		}},
		{[]string{"--timeout=2s", u}, func(c loadgen.Config, _ *runFlags) bool { return c.Timeout == 2*time.Second }},
		{[]string{"-timeout", "5s", u}, func(c loadgen.Config, _ *runFlags) bool { return c.Timeout == 5*time.Second }},
		{[]string{"--timeout", "1", "--warmup=2", "-probe-interval", "0.5", u}, func(c loadgen.Config, rf *runFlags) bool {
			return c.Timeout == time.Second && c.Warmup == 2*time.Second && rf.probeInterval == 500*time.Millisecond
		}},
		{[]string{"-k=false", u}, func(c loadgen.Config, _ *runFlags) bool { return !c.KeepAlive }},
		{[]string{"--no-keepalive", u}, func(c loadgen.Config, _ *runFlags) bool { return !c.KeepAlive }},
		{[]string{"-keepalive=false", "-q", u}, func(c loadgen.Config, rf *runFlags) bool { return !c.KeepAlive && rf.quiet }},
		{[]string{u}, func(c loadgen.Config, _ *runFlags) bool {
			return c.KeepAlive && c.Connections == 10 && c.Timeout == 2*time.Second && c.Method == "GET"
		}},
		// wrk's long names.
		{[]string{"--threads", "2", "--connections", "50", "--duration", "2m", "--header", "Host: x", "--timeout", "3s", "--latency", u},
			func(c loadgen.Config, _ *runFlags) bool {
				return c.Threads == 2 && c.Connections == 50 && c.Duration == 2*time.Minute && len(c.Headers) == 1 && c.Timeout == 3*time.Second
			}},
		{[]string{"-m", "POST", "--body", "x=1", "--label", "server=nginx", "-label", "build=gcc-9.3", u}, func(c loadgen.Config, rf *runFlags) bool {
			return c.Method == "POST" && string(c.Body) == "x=1" && rf.labels["server"] == "nginx" && rf.labels["build"] == "gcc-9.3"
		}},
	} {
		rf, err := parseRunFlags(tc.args, io.Discard, func(string) string { return "" })
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if rf.url != u || !tc.want(rf.cfg, rf) {
			t.Errorf("%q: url %q, config %+v", tc.args, rf.url, rf.cfg)
		}
	}
}

// connCounter is an HTTP server that counts the connections it accepts:
// the server's side of keep-alive.
func connCounter(t *testing.T) (url string, conns *atomic.Int64) {
	conns = new(atomic.Int64)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello\n")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL + "/", conns
}

// TestFlagsAsTypedThroughTheBinary runs the device binary as a user would,
// with the flags as they are typed for ab and wrk: the runs happen, the
// server sees keep-alive only when it is on, and mistakes are one line
// and exit status 2.
func TestFlagsAsTypedThroughTheBinary(t *testing.T) {
	base := startTarget(t)
	wrk := runBinary(t, "run", "-t2", "-c4", "-d1s", "--latency", "--format", "wrk", base+"/bytes/100")
	if wrk.code != 0 || !strings.Contains(wrk.stdout, "2 threads and 4 connections") || !strings.Contains(wrk.stdout, "Latency Distribution") {
		t.Errorf("wrk's flags: exit %d\n%s%s", wrk.code, wrk.stdout, wrk.stderr)
	}

	url, conns := connCounter(t)
	for _, tc := range []struct {
		args      []string
		keepAlive bool
	}{
		{[]string{"run", "-c2", "-n40", "-k=false", "--no-probe", "--format", "json", url}, false},
		{[]string{"run", url, "--no-keepalive", "-n", "40", "-c", "2", "--no-probe", "--format=json"}, false},
		{[]string{"run", "-c2", "-n40", "-k", "--no-probe", "--format", "json", url}, true},
		{[]string{"run", "-c2", "-n40", "--no-probe", "-format", "json", url}, true},
	} {
		conns.Store(0)
		r := runBinary(t, tc.args...)
		var doc struct {
			KeepAlive bool  `json:"keepalive"`
			Completed int64 `json:"completed"`
		}
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &doc) != nil {
			t.Errorf("%q: exit %d\n%s%s", tc.args, r.code, r.stdout, r.stderr)
			continue
		}
		n := conns.Load()
		if doc.KeepAlive != tc.keepAlive || doc.Completed < 40 ||
			(tc.keepAlive && n > 2) || (!tc.keepAlive && n != doc.Completed) {
			t.Errorf("%q: keepalive %v, %d requests over %d connections the server accepted", tc.args, doc.KeepAlive, doc.Completed, n)
		}
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--keep-alive", url}, "edgebench run: unknown flag --keep-alive; did you mean --keepalive?"},
		{[]string{"run", "-keep-alive", url}, "edgebench run: unknown flag -keep-alive; did you mean --keepalive?"},
		{[]string{"run", "--conections", "5", url}, "edgebench run: unknown flag --conections; did you mean --connections?"},
		{[]string{"run", "-c", "lots", url}, `edgebench run: -c "lots": want a whole number`},
		{[]string{"run", "--timeout=soon", url}, `edgebench run: --timeout "soon": want a duration such as 30s, 500ms or 2m (a bare number is seconds)`},
		{[]string{"run", "-k=maybe", url}, `edgebench run: -k "maybe": want true or false`},
		{[]string{"run", url, "-n"}, "edgebench run: -n needs a value: a whole number"},
		{[]string{"probe", "--intervall", "1"}, "edgebench probe: unknown flag --intervall; did you mean --interval?"},
		{[]string{"serve", "-adr", ":0"}, "edgebench serve: unknown flag -adr; did you mean --addr?"},
		{[]string{"agent", "-heartbeat-interval", "soon"}, `edgebench agent: -heartbeat-interval "soon": want a duration such as 30s, 500ms or 2m (a bare number is seconds)`},
		{[]string{"agent", "--broker-urll", "tcp://x:1883"}, "edgebench agent: unknown flag --broker-urll; did you mean --broker-url?"},
		{[]string{"rn", url}, `edgebench: unknown command "rn"; did you mean run?`},
	} {
		r := runBinary(t, tc.args...)
		if r.code != 2 || r.stderr != tc.want+"\n" || r.stdout != "" {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	for _, args := range [][]string{{"run", "-h"}, {"run", "--help"}, {"run", url, "-help"}, {"help", "run"}} {
		r := runBinary(t, args...)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "usage: edgebench run [flags] URL\n") || !strings.Contains(r.stdout, "-c, --connections int") || r.stderr != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
	// Durations take a bare number of seconds everywhere.
	if r := runBinary(t, "probe", "--interval", "0.2", "--count", "1", "--format", "csv"); r.code != 0 || strings.Count(r.stdout, "\n") != 2 {
		t.Errorf("probe --interval 0.2: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestMaxTimeFlag: -n runs get loadgen's default bound, --max-time 0
// lifts it, a negative one or one beside -d is refused.
func TestMaxTimeFlag(t *testing.T) {
	const u = "http://127.0.0.1/"
	for _, tc := range []struct {
		args []string
		want time.Duration // -1: error
	}{
		{[]string{"-n", "10", u}, loadgen.DefaultMaxTime},
		{[]string{"-n", "10", "--max-time", "30s", u}, 30 * time.Second},
		{[]string{"-n", "10", "--max-time", "0", u}, -1},
		{[]string{"-n", "10", "--max-time", "-1s", u}, -2},
		{[]string{"-d", "10s", "--max-time", "30s", u}, -2},
	} {
		rf, err := parseRunFlags(tc.args, io.Discard, func(string) string { return "" })
		switch {
		case tc.want == -2 && err == nil:
			t.Errorf("%q: accepted", tc.args)
		case tc.want != -2 && err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case err == nil && rf.cfg.MaxTime != tc.want:
			t.Errorf("%q: MaxTime %v, want %v", tc.args, rf.cfg.MaxTime, tc.want)
		}
	}
}
