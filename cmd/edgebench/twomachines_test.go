package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/probe/machine"
	"github.com/edgebench/edgebench/verdict"
)

// These tests run edgebench on this machine against nginx in a network
// namespace (internal/testenv's Netns): a second machine with its own
// link, reached through a veth pair. Traffic goes to the namespace's
// address only.

// runTwo runs `edgebench run --format json` with args and returns its
// verdict and machine report.
func runTwo(t *testing.T, args ...string) (verdict.Verdict, *machine.Report, string) {
	t.Helper()
	argv := append([]string{"run", "-q", "--format", "json"}, args...)
	out, err := exec.Command(testenv.Binary(t, "."), argv...).Output()
	if err != nil {
		t.Fatalf("edgebench %v: %v\n%s", argv, err, out)
	}
	var doc struct {
		Verdict *verdict.Verdict `json:"verdict"`
		System  *machine.Report  `json:"system"`
	}
	if err := json.Unmarshal(out, &doc); err != nil || doc.Verdict == nil || doc.System == nil {
		t.Fatalf("no verdict or system in %s (%v)", out, err)
	}
	return *doc.Verdict, doc.System, string(out)
}

// othersBusy reports whether a verdict says that other processes held
// this machine's cores or its disks: the tests of other packages, which run beside
// these in make test, and whatever else the machine does.
func othersBusy(v verdict.Verdict) bool {
	r := strings.Join(v.Reasons, "; ")
	// The loader writes nothing: a disk verdict is the box's other IO.
	return v.LimitedBy == verdict.CPU || v.LimitedBy == verdict.Disk || strings.Contains(r, "other processes took")
}

// Over a link limited to 100 Mb/s (tc tbf on the namespace's side), a
// large body: the round trip to the target grows from microseconds to
// the shaper's queue, the loader receives what the link carries, and the
// verdict names the network with those figures.
func TestTwoMachinesLinkLimited(t *testing.T) {
	host, ns := testenv.FreeSubnet(t)
	n := testenv.NewNetns(t, testenv.NetnsConfig{HostAddr: host, Addr: ns, EgressRate: "100mbit"})
	srv := testenv.NginxWith(t, testenv.NginxConfig{Netns: n, Files: map[string]int{"big": 256 << 10}})
	url := "http://" + srv.Addr + "/big"
	var busy []string
	for range 4 {
		v, sys, out := runTwo(t, "-c", "10", "-d", "4s", url)
		p := sys.Summary.Path
		if p == nil || p.Target != srv.Addr || p.Idle == nil || p.Loaded == nil {
			t.Fatalf("no round trip to %s measured: %+v\n%s", srv.Addr, p, out)
		}
		t.Logf("round trip idle %+v, under load %+v; %s: %q", *p.Idle, *p.Loaded, v.LimitedBy, v.Reasons)
		// The shaper's queue: 50 ms at 100 Mb/s, filled by 10
		// connections; a veth alone answers in microseconds.
		if p.Idle.MedianMS > 1 || p.Loaded.MedianMS < 5 || p.Loaded.MedianMS > 500 {
			t.Errorf("round trip idle %+v, under load %+v", *p.Idle, *p.Loaded)
		}
		// What the host's end of the veth received: the link's rate, 100
		// Mb/s at most (with its framing), and most of it.
		var rx float64
		for _, nt := range sys.Summary.Nets {
			if nt.Name == n.HostIf {
				rx = (nt.RxKBs.Mean*1024 + 24*nt.RxPps.Mean) * 8 / 1e6
			}
		}
		if rx < 60 || rx > 105 {
			t.Errorf("%s received %.1f Mb/s through a 100 Mb/s limit", n.HostIf, rx)
		}
		if othersBusy(v) {
			busy = append(busy, strings.Join(v.Reasons, "; "))
			time.Sleep(time.Second)
			continue
		}
		want := fmt.Sprintf("the round-trip time to %s grew from ", srv.Addr)
		if v.LimitedBy != verdict.Network || !strings.HasPrefix(v.Reasons[0], want) ||
			!strings.Contains(v.Reasons[0], fmt.Sprintf("the loader's %s received ", n.HostIf)) || !strings.Contains(v.Reasons[0], " Mb/s") {
			t.Errorf("verdict %s %q, want the network with the round trip and the link's rate\n%s", v.LimitedBy, v.Reasons, out)
		}
		return
	}
	t.Skipf("!!! other processes held the cores in each of 4 runs, as the verdicts say (%s): SKIPPING the network's verdict, which needs cores to spare", strings.Join(busy, "; "))
}

// Without a limit, a small page from one nginx worker: the worker or the
// cores are the limit, never the network; the round trip barely moves.
func TestTwoMachinesNotTheNetwork(t *testing.T) {
	host, ns := testenv.FreeSubnet(t)
	n := testenv.NewNetns(t, testenv.NetnsConfig{HostAddr: host, Addr: ns})
	srv := testenv.NginxWith(t, testenv.NginxConfig{Netns: n, Workers: 1})
	workers := testenv.Children(srv.Master)
	if len(workers) != 1 {
		t.Fatalf("nginx workers %v", workers)
	}
	v, sys, out := runTwo(t, "-c", "10", "-d", "3s", "--watch", fmt.Sprint(workers[0]), "http://"+srv.Addr+"/index.html")
	p := sys.Summary.Path
	if p == nil || p.Idle == nil || p.Loaded == nil {
		t.Fatalf("no round trip measured: %+v\n%s", p, out)
	}
	t.Logf("round trip idle %+v, under load %+v; %s: %q", *p.Idle, *p.Loaded, v.LimitedBy, v.Reasons)
	if v.LimitedBy == verdict.Network || strings.Contains(strings.Join(v.Reasons, "; "), "round-trip") {
		t.Errorf("verdict %s %q: the network named on an unlimited link\n%s", v.LimitedBy, v.Reasons, out)
	}
	if ps := sys.Summary.Procs; len(ps) == 0 || ps[0].PID != workers[0] || ps[0].CPU == nil || ps[0].CPU.Mean < 10 {
		t.Errorf("the worker's CPU: %+v", ps)
	}
}
