package main

import (
	"encoding/json"
	"math"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/compare"
	"github.com/edgebench/edgebench/collector/series"
)

// slowableServer is an HTTP server on loopback whose every response waits
// delay first.
func slowableServer(t *testing.T, delay *atomic.Int64) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d := time.Duration(delay.Load()); d > 0 {
			time.Sleep(d)
		}
		w.Write([]byte("ok\n"))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/"
}

// TestScheduledFleetFindsTheSlowerServer: the collector binary and two
// real agents, each fired by its own schedule every second, 2 connections
// for 1.5 s against a server that takes 2 ms per request (about 1,000
// req/s, the connections the limit: a valid run on a busy box too);
// halfway, pi-2's server starts taking 20 ms (about 100 req/s, still 150
// requests a run, enough for its p99: valid). `changes` finds pi-2's
// req/s change, worse, at the first result after the slowdown, and none
// of that size on pi-1. A firing that finds its device still busy sends
// nothing and records it as missed. (An open loop the slower server
// cannot keep up with is NOT VALID, and detection leaves such runs out.)
func TestScheduledFleetFindsTheSlowerServer(t *testing.T) {
	f := newTestFleet(t)
	var fast, slow atomic.Int64
	fast.Store(int64(2 * time.Millisecond))
	slow.Store(int64(2 * time.Millisecond))
	urls := map[string]string{"pi-1": slowableServer(t, &fast), "pi-2": slowableServer(t, &slow)}
	f.startAgent("pi-1", "one")
	f.startAgent("pi-2", "two")
	f.waitOnline("pi-1")
	f.waitOnline("pi-2")
	colBin, _ := fleetBinaries(t)
	cli := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(colBin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	for id, u := range urls {
		cli("schedule", "add", "bench-"+id, "--server", "http://"+f.web, "--every", "1s", "--device", id, "--fleet", "lab",
			"-c", "2", "-d", "1500ms", "--label", "server=go", u)
	}
	count := func(id string) (n int, last time.Time) {
		out := cli("export", "--db", f.db, "--device", id, "--format", "json")
		var rows []compare.ExportRow
		json.Unmarshal([]byte(out), &rows)
		for _, r := range rows {
			if r.Started.After(last) {
				last = r.Started
			}
		}
		return len(rows), last
	}
	until := func(what string, limit time.Duration, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(limit)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %v\n%s", what, limit, cli("schedule", "list", "--server", "http://"+f.web))
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	until("12 results of pi-2", 90*time.Second, func() bool { n, _ := count("pi-2"); return n >= 12 })
	_, lastFast := count("pi-2")
	slow.Store(int64(20 * time.Millisecond))
	flipped := time.Now()
	until("8 slower results of pi-2", 90*time.Second, func() bool {
		rows := 0
		out := cli("export", "--db", f.db, "--device", "pi-2", "--format", "json")
		var rs []compare.ExportRow
		json.Unmarshal([]byte(out), &rs)
		for _, r := range rs {
			if r.Started.After(flipped) {
				rows++
			}
		}
		return rows >= 8
	})
	cli("schedule", "pause", "bench-pi-1", "--server", "http://"+f.web)
	cli("schedule", "pause", "bench-pi-2", "--server", "http://"+f.web)
	out := cli("changes", "--db", f.db, "--since", "0")
	t.Log("\n" + out)
	var cs []series.Change
	if err := json.Unmarshal([]byte(cli("changes", "--db", f.db, "--since", "0", "--json")), &cs); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range cs {
		switch {
		case c.Device == "pi-2" && c.Metric == "rps":
			// The first result after: the first that started after the
			// last fast one (a run under way at the flip may be either).
			if c.At.After(lastFast) && !c.At.After(flipped.Add(3*time.Second)) && c.Worse() && c.Pct <= -25 {
				found = true
			} else {
				t.Logf("another change of pi-2's req/s: %s %+.1f%%", c.At, c.Pct)
			}
		case c.Device == "pi-1" && c.Metric == "rps" && math.Abs(c.Pct) >= 25:
			// A loaded machine (make test runs packages side by side) may
			// slow pi-1's open loop a little for a while: a real change the
			// detector may report; one the size of pi-2's is not.
			t.Errorf("pi-1's req/s changed %+.1f%%: %+v", c.Pct, c)
		}
	}
	if !found {
		t.Errorf("no req/s change of pi-2, worse by 25 %% or more, between %s and %s:\n%s", lastFast, flipped.Add(3*time.Second), out)
	}
	runs := cli("schedule", "runs", "bench-pi-2", "--server", "http://"+f.web, "--limit", "0")
	if strings.Count(runs, "\n") < 20 || strings.Contains(runs, "rejected") {
		t.Errorf("schedule runs: want 20 or more, none sent to a busy device:\n%s", runs)
	}
	t.Logf("schedule runs of bench-pi-2:\n%s", runs)
}
