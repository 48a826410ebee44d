package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os/exec"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/testenv"
)

// procRow is a watched process as the JSON report gives it.
type procRow struct {
	Name  string `json:"name"`
	PID   int    `json:"pid"`
	Count int    `json:"count"`
}

// runWatching runs `edgebench run --format json` and returns the run's PID
// and the watched rows of its summary and of every sample.
func runWatching(t *testing.T, args ...string) (pid int, summary []procRow, samples [][]procRow) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testenv.Binary(t, "."), append([]string{"run", "-c", "2", "-d", "1s", "--format", "json"}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid = cmd.Process.Pid
	if err := cmd.Wait(); err != nil {
		t.Fatalf("run %v: %v\n%s", args, err, errb.String())
	}
	var doc struct {
		System struct {
			Samples []struct {
				Procs []procRow `json:"procs"`
			} `json:"samples"`
			Summary struct {
				Procs []procRow `json:"procs"`
			} `json:"summary"`
		} `json:"system"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("json: %v\n%s", err, out.String())
	}
	for _, s := range doc.System.Samples {
		samples = append(samples, s.Procs)
	}
	return pid, doc.System.Summary.Procs, samples
}

// A run against one of two nginx instances watches that instance (its
// master and two workers) and itself by PID; a run against `edgebench
// serve` watches that serve process, apart from the run; --watch nginx sums
// every nginx.
func TestRunWatchesTheTargetServer(t *testing.T) {
	target := testenv.Nginx(t, 2)
	foreign := testenv.Nginx(t, 2)
	addr := testenv.FreeAddr(t)
	serve := exec.Command(testenv.Binary(t, "."), "serve", "--addr", addr)
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		serve.Process.Kill()
		serve.Wait()
	})
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("edgebench serve did not listen")
		}
		time.Sleep(20 * time.Millisecond)
	}

	pid, sum, samples := runWatching(t, "http://"+target.Addr+"/index.html")
	want := []procRow{{"nginx", target.Master, 3}, {"edgebench", pid, 1}}
	if len(sum) != 2 || sum[0] != want[0] || sum[1] != want[1] {
		t.Errorf("summary rows %+v, want %+v (the other nginx is %d)", sum, want, foreign.Master)
	}
	for i, s := range samples {
		if len(s) != 2 || s[0] != want[0] || s[1] != want[1] {
			t.Errorf("sample %d rows %+v, want %+v", i, s, want)
		}
	}

	pid, sum, _ = runWatching(t, "http://"+addr+"/")
	want = []procRow{{"edgebench", serve.Process.Pid, 1}, {"edgebench", pid, 1}}
	if len(sum) != 2 || sum[0] != want[0] || sum[1] != want[1] {
		t.Errorf("against serve: rows %+v, want %+v", sum, want)
	}

	// Asked by name, every nginx counts: both instances (and any other
	// running on this machine), in place of the listening one's tree; and
	// the run's own row stays.
	pid, sum, _ = runWatching(t, "--watch", "nginx", "http://"+target.Addr+"/index.html")
	if len(sum) != 2 || sum[0].Name != "nginx" || sum[0].PID != 0 || sum[0].Count < 6 || sum[1] != (procRow{"edgebench", pid, 1}) {
		t.Errorf("--watch nginx: rows %+v, want both instances' 6 processes or more, then edgebench [%d]", sum, pid)
	}
}
