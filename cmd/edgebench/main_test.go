package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.RemoveBinaries() // the edgebench the tests ran as a process
	os.Exit(code)
}

type ran struct {
	stdout, stderr string
	code           int
}

func runBinary(t *testing.T, args ...string) ran {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testenv.Binary(t, "."), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return ran{out.String(), errb.String(), code}
}

func startTarget(t *testing.T) string {
	t.Helper()
	return testenv.Target(t, "")
}

func TestUsageErrorsExitTwoWithOneLine(t *testing.T) {
	for _, args := range [][]string{
		{"run"},
		{"run", "ftp://127.0.0.1/"},
		{"run", "http://127.0.0.1/", "-c", "lots"},
		{"run", "-d", "soon", "http://127.0.0.1/"},
		{"run", "--format", "xml", "http://127.0.0.1/"},
		{"run", "-H", "NoColon", "http://127.0.0.1/"},
		{"run", "http://127.0.0.1/", "http://127.0.0.2/"},
		{"run", "--repeat", "0", "http://127.0.0.1/"},
		{"run", "-c", "-4", "http://127.0.0.1/"},
		{"run", "-c", "0", "http://127.0.0.1/"},
		{"run", "--timeout", "0", "http://127.0.0.1/"},
		{"run", "127.0.0.1:8080/"},
		{"serve", "--addr", "nonsense"},
		{"nosuchcommand"},
	} {
		r := runBinary(t, args...)
		lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
		if r.code != 2 || len(lines) != 1 || !strings.HasPrefix(lines[0], "edgebench") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line", args, r.code, r.stderr)
		}
	}
	if r := runBinary(t, "run", "-h"); r.code != 0 || !strings.Contains(r.stdout, "-no-keepalive") {
		t.Errorf("run -h: exit %d, stdout %q", r.code, r.stdout)
	}
}

func TestRunReportsInEveryFormat(t *testing.T) {
	base := startTarget(t)
	url := base + "/bytes/2159"
	r := runBinary(t, "run", "-c", "4", "-n", "400", "--format", "json", url)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if r.stderr != "" {
		t.Errorf("stderr is not a terminal, yet it got %q", r.stderr)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("json: %v\n%s", err, r.stdout)
	}
	for _, k := range []string{"completed", "rps", "bytes", "duration_s", "errors", "status_codes", "latency_us", "timeline", "server"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("json lacks %q", k)
		}
	}
	if doc["completed"].(float64) != 400 || doc["server"] != "edgebench/test" {
		t.Errorf("completed %v server %v", doc["completed"], doc["server"])
	}
	errs := doc["errors"].(map[string]any)
	for _, k := range []string{"connect", "read", "write", "timeout", "status", "length"} {
		if _, ok := errs[k]; !ok {
			t.Errorf("errors lack %q", k)
		}
	}
	lat := doc["latency_us"].(map[string]any)
	for _, k := range []string{"min", "mean", "stdev", "max", "p50", "p90", "p99", "p999"} {
		if _, ok := lat[k]; !ok {
			t.Errorf("latency_us lacks %q", k)
		}
	}
	if doc["status_codes"].(map[string]any)["200"].(float64) != 400 {
		t.Errorf("status_codes %v", doc["status_codes"])
	}
	// The probe's section: a summary with CPU figures and edgebench
	// itself among the watched processes, over a window long enough for
	// rates (a tenth of the 1 s interval; 400 requests may take less).
	r = runBinary(t, "run", "-c", "4", "-d", "1s", "--format", "json", url)
	doc = nil
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("json: %v\n%s", err, r.stdout)
	}
	sys, _ := doc["system"].(map[string]any)
	summary, _ := sys["summary"].(map[string]any)
	if summary["cpu"] == nil || len(sys["samples"].([]any)) < 2 {
		t.Errorf("system section: %v", sys)
	}
	if procs, _ := summary["procs"].([]any); len(procs) == 0 {
		t.Errorf("no watched process in %v", summary)
	}
	if r := runBinary(t, "run", "-n", "10", "--no-probe", "--format", "json", url); strings.Contains(r.stdout, `"system"`) {
		t.Errorf("--no-probe still sampled")
	}

	ab := runBinary(t, "run", "-n", "300", "-c", "3", "--no-keepalive", "--format", "ab", url)
	for _, want := range []string{"Server Software:        edgebench/test", "Document Length:        2159 bytes", "Concurrency Level:      3",
		"Complete requests:      300", "Failed requests:        0", "Requests per second:", "Connection Times (ms)", "(longest request)"} {
		if !strings.Contains(ab.stdout, want) {
			t.Errorf("ab report lacks %q:\n%s", want, ab.stdout)
		}
	}
	wrk := runBinary(t, "run", "-t", "2", "-c", "4", "-d", "1", "--format", "wrk", url)
	for _, want := range []string{"2 threads and 4 connections", "Thread Stats", "Latency Distribution", "Requests/sec:", "Transfer/sec:"} {
		if !strings.Contains(wrk.stdout, want) {
			t.Errorf("wrk report lacks %q:\n%s", want, wrk.stdout)
		}
	}
	rep := runBinary(t, "run", "-n", "200", "--repeat", "3", url)
	if rep.code != 0 || !strings.Contains(rep.stdout, "over 3 runs") || strings.Count(rep.stdout, "--- run") != 3 {
		t.Errorf("repeat: exit %d\n%s", rep.code, rep.stdout)
	}
}

// TestRunAgainstRefusingPortFails: a port nobody listens on is one line
// saying so and exit status 1, not a report of zeros; --format json
// gives scripts a document with the error.
func TestRunAgainstRefusingPortFails(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	want := "edgebench run: connection refused: " + addr + "\n"
	r := runBinary(t, "run", "-d", "30s", "http://"+addr+"/")
	if r.code != 1 || r.stderr != want || r.stdout != "" {
		t.Errorf("exit %d stderr %q stdout %q; want 1, %q and nothing", r.code, r.stderr, r.stdout, want)
	}
	r = runBinary(t, "run", "--format", "json", "http://"+addr+"/")
	var doc map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 1 || r.stderr != want ||
		doc["error"] != "connection refused: "+addr || doc["url"] != "http://"+addr+"/" || len(doc) != 2 {
		t.Errorf("json: exit %d stderr %q stdout %q (%v)", r.code, r.stderr, r.stdout, err)
	}
}

// TestUsageHints: the hints of a usage error name the fix.
func TestUsageHints(t *testing.T) {
	for _, tc := range []struct{ arg, want string }{
		{"127.0.0.1:8080/", `did you mean "http://127.0.0.1:8080/"?`},
		{"localhost/x", `did you mean "http://localhost/x"?`},
	} {
		if r := runBinary(t, "run", tc.arg); r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: exit %d, %q; want 2 and %s", tc.arg, r.code, r.stderr, tc.want)
		}
	}
}

// TestRunFlagsAsTyped: -k=false turns keep-alive off (one connection per
// request, as the target's connection count shows); the length check is
// opt-in, --no-length-check still accepted.
func TestRunFlagsAsTyped(t *testing.T) {
	url := startTarget(t) + "/bytes/100"
	for _, tc := range []struct {
		args      []string
		keepalive bool
		lengths   bool
	}{
		{nil, true, false},
		{[]string{"-k=false"}, false, false},
		{[]string{"--keepalive=false"}, false, false},
		{[]string{"-k", "--length-check"}, true, true},
		{[]string{"--no-length-check"}, true, false},
	} {
		args := append([]string{"run", "-c", "2", "-n", "50", "--no-probe", "--format", "json"}, tc.args...)
		r := runBinary(t, append(args, url)...)
		var doc struct {
			KeepAlive   bool  `json:"keepalive"`
			LengthCheck bool  `json:"length_check"`
			Completed   int64 `json:"completed"`
			Connects    int64 `json:"connects"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 0 {
			t.Fatalf("%v: exit %d %s %v", tc.args, r.code, r.stderr, err)
		}
		// With keep-alive, 2 connections at most (one loop may do all 50
		// before the other starts); without, one per request.
		connectsOK := doc.Connects >= 1 && doc.Connects <= 2
		if !tc.keepalive {
			connectsOK = doc.Connects == 50
		}
		if doc.KeepAlive != tc.keepalive || doc.LengthCheck != tc.lengths || doc.Completed != 50 || !connectsOK {
			t.Errorf("%v: %+v, want keepalive %v, length check %v", tc.args, doc, tc.keepalive, tc.lengths)
		}
	}
}

// TestRunWindowAndDrain is issue 9's repro as typed: the window is the 3 s
// asked, the requests in flight at its end are reported apart.
func TestRunWindowAndDrain(t *testing.T) {
	url := startTarget(t) + "/delay/1900"
	r := runBinary(t, "run", "-c", "4", "-d", "3s", "--timeout", "2s", "--format", "json", url)
	var doc struct {
		DurationS float64 `json:"duration_s"`
		Completed int64   `json:"completed"`
		RPS       float64 `json:"rps"`
		Drained   struct {
			Requests, Completed int64
		} `json:"drained"`
		System struct {
			Summary struct{ Seconds float64 } `json:"summary"`
		} `json:"system"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 0 {
		t.Fatalf("exit %d %s %v", r.code, r.stderr, err)
	}
	if doc.DurationS != 3 || doc.Completed != 4 || doc.RPS != 1.33 || doc.Drained.Requests != 4 || doc.Drained.Completed != 4 {
		t.Errorf("%+v: want a 3 s window, 4 completed at 1.33 req/s, 4 drained", doc)
	}
	// The machine's window is the same, without the drain (0.8 s here):
	// what samples at its edges take is a few milliseconds.
	if s := doc.System.Summary.Seconds; s < 2.9 || s > 3.2 {
		t.Errorf("the probe's window is %.2f s, the run's 3 s", s)
	}
	// A window too short for any reply: the drained ones were fine, so
	// the run did not fail.
	r = runBinary(t, "run", "-c", "1", "-d", "200ms", "--no-probe", strings.Replace(url, "1900", "500", 1))
	if r.code != 0 || !strings.Contains(r.stdout, "0 completed") || !strings.Contains(r.stdout, "drained     1 in flight") {
		t.Errorf("exit %d %s\n%s", r.code, r.stderr, r.stdout)
	}
}

func TestVersion(t *testing.T) {
	r := runBinary(t, "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "edgebench ") {
		t.Errorf("version: %d %q", r.code, r.stdout)
	}
}

func TestAgentBadConfigExitsTwo(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"unknown.yaml": "brokr:\n  url: tcp://127.0.0.1:1883\n",
		"value.yaml":   "policy:\n  max_connections: -3\n",
	} {
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte(body), 0o644)
		r := runBinary(t, "agent", "--config", path)
		lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
		if r.code != 2 || len(lines) != 1 || !strings.Contains(r.stderr, name) {
			t.Errorf("%s: exit %d, stderr %q", name, r.code, r.stderr)
		}
	}
	if r := runBinary(t, "agent", "--config", filepath.Join(dir, "missing.yaml")); r.code != 2 {
		t.Errorf("a named config that is missing: exit %d, %q", r.code, r.stderr)
	}
}

// TestEveryRequestTimesOut: a server that never answers in time; the
// window's errors and the drained requests' are counted once each and
// named alike in the report and in the exit line, for run and wrk.
func TestEveryRequestTimesOut(t *testing.T) {
	url := startTarget(t) + "/delay/5000"
	r := runBinary(t, "run", "-c", "3", "-d", "1s", "--timeout", "2s", "--no-probe", url)
	if r.code != 1 || !strings.Contains(r.stdout, "failed: timeout 3") ||
		r.stderr != "edgebench run: no successful response (errors in the measured window: none; drained at the end: 3 in flight, 0 completed, failed: timeout 3)\n" {
		t.Errorf("run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stderr, "timeout 0") {
		t.Errorf("run: the exit line says no timeout while the drain timed out: %s", r.stderr)
	}
	r = runBinary(t, "wrk", "-c", "3", "-t", "1", "-d", "1s", "--timeout", "2s", "--no-system", url)
	if r.code != 1 || !strings.Contains(r.stderr, "drained at the end: 3 in flight") || strings.Contains(r.stderr, "timeout 0") {
		t.Errorf("wrk: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
