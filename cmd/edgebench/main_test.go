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

	"github.com/edgebench/edgebench/target"
)

// binary is the edgebench built once for the tests that run it as a
// process, as a user would.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "edgebench-cli-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "edgebench")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		panic("go build: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
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
	cmd := exec.CommandContext(ctx, binary, args...)
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
	srv, err := target.Start("127.0.0.1:0", "edgebench/test", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return "http://" + srv.Addr()
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
		{"serve", "--addr", "nonsense"},
		{"nosuchcommand"},
	} {
		r := runBinary(t, args...)
		lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
		if r.code != 2 || len(lines) != 1 || !strings.HasPrefix(lines[0], "edgebench") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line", args, r.code, r.stderr)
		}
	}
	if r := runBinary(t, "run", "-h"); r.code != 0 || !strings.Contains(r.stderr, "-no-keepalive") {
		t.Errorf("run -h: exit %d, stderr %q", r.code, r.stderr)
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

func TestRunAgainstRefusingPortFails(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	r := runBinary(t, "run", "-d", "30s", "http://"+addr+"/")
	if r.code != 1 || !strings.Contains(r.stderr, "connect") {
		t.Errorf("exit %d stderr %q stdout %q", r.code, r.stderr, r.stdout)
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
