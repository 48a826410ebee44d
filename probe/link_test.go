package probe

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/verdict"
)

// The link fixture: each interface gets its own speed, read from sysfs;
// unknown (-1, or no file as for lo) is 0.
func TestLinkSpeedFixture(t *testing.T) {
	rep := fixtureReport(t, "link", time.Second, Watch{Name: "nginx"}, Watch{PID: 600})
	got := map[string]int{}
	for _, n := range rep.Summary.Nets {
		got[n.Name] = n.SpeedMbps
	}
	want := map[string]int{"lo": 0, "eth0": 100, "wlan0": 0, "usb0": 1000}
	if len(got) != len(want) {
		t.Fatalf("nets %v, want %v", got, want)
	}
	for name, v := range want {
		if s, ok := got[name]; !ok || s != v {
			t.Errorf("%s speed = %d (listed %v), want %d", name, s, ok, v)
		}
	}
	var buf bytes.Buffer
	if err := rep.WriteText(&buf); err != nil || !strings.Contains(buf.String(), "eth0 (100 Mb/s)") || strings.Contains(buf.String(), "wlan0 (") {
		t.Errorf("text report (%v):\n%s", err, buf.String())
	}
	for _, n := range rep.Summary.Nets {
		if n.Name != "eth0" {
			continue
		}
		// The figures the verdict weighs against the speed.
		if n.RxKBs.Mean != 11575300.0/1024 || n.RxPps.Mean != 7800 || n.TxPps.Mean != 3900 {
			t.Errorf("eth0 = %+v", n)
		}
		if mbps := (n.RxKBs.Mean*1024 + 24*n.RxPps.Mean) * 8 / 1e6; math.Abs(mbps-94.1) > 1e-9 {
			t.Errorf("eth0 on the wire %v Mb/s, want 94.1", mbps)
		}
	}
}

// The allowed cores of a watched group are those of its processes that
// ran (nginx's worker on core 1), not its idle master's or other worker's;
// a process alone has its own.
func TestCPUsAllowedFixture(t *testing.T) {
	rep := fixtureReport(t, "link", time.Second, Watch{Name: "nginx"}, Watch{PID: 600})
	ps := rep.Summary.Procs
	if len(ps) != 2 {
		t.Fatalf("procs %+v", ps)
	}
	if ps[0].Name != "nginx" || ps[0].Count != 3 || ps[0].CPU == nil || ps[0].CPU.Mean != 99 || !slices.Equal(ps[0].CPUs, []int{1}) {
		t.Errorf("nginx = %+v cpu %v, want 99 %% on cores [1]", ps[0], ps[0].CPU)
	}
	if !slices.Equal(ps[1].CPUs, []int{0, 1}) {
		t.Errorf("edgebench cores %v, want [0 1]", ps[1].CPUs)
	}
	// The first sample, before anything ran: every process's cores.
	if first := rep.Samples[0].Procs[0]; !slices.Equal(first.CPUs, []int{0, 1}) {
		t.Errorf("first sample's nginx cores %v, want [0 1]", first.CPUs)
	}
}

func TestParseCPUList(t *testing.T) {
	for in, want := range map[string][]int{"0": {0}, "0-3\n": {0, 1, 2, 3}, "1,3,8-9": {1, 3, 8, 9}, "63-65": {63, 64, 65}} {
		s, err := parseCPUList([]byte(in))
		if err != nil || !slices.Equal(s.list(), want) {
			t.Errorf("%q: %v %v, want %v", in, s.list(), err, want)
		}
	}
	for _, bad := range []string{"", "a", "3-1", "1,,2", "-", "0-1024", "1024"} {
		if _, err := parseCPUList([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := parseCpusAllowed([]byte("Name:\tx\nCpus_allowed:\t3\n")); err == nil {
		t.Error("status without Cpus_allowed_list accepted")
	}
}

// The verdict on the link fixture: nginx at its one core first; without
// nginx watched, eth0 at 94 % of its link.
func TestLinkFixtureVerdict(t *testing.T) {
	l := &report.LoadResult{Connections: 10, Threads: 1, Duration: time.Second, Completed: 5000, OK: 5000, Latency: report.NewLatencyHistogram(),
		Target: report.Target{URL: "http://192.168.2.10/", Host: "192.168.2.10", Port: 80, Path: "/"}}
	for range 5000 {
		l.Latency.Record(300)
	}
	rep := fixtureReport(t, "link", time.Second, Watch{Name: "nginx"}, Watch{PID: 600})
	v := verdict.Judge(verdict.Input{Load: l, System: rep, GeneratorPID: 600})
	if v.LimitedBy != verdict.Server || v.Reasons[0] != "nginx at 99 % of cpu1, the one core it may use" {
		t.Errorf("nginx pinned: %s %q", v.LimitedBy, v.Reasons)
	}
	rep = fixtureReport(t, "link", time.Second, Watch{PID: 600})
	v = verdict.Judge(verdict.Input{Load: l, System: rep, GeneratorPID: 600})
	if v.LimitedBy != verdict.Network || v.Reasons[0] != "eth0 received 94.1 Mb/s of its 100 Mb/s link (94 %)" {
		t.Errorf("eth0: %s %q", v.LimitedBy, v.Reasons)
	}
	l.Target.Host = "127.0.0.1"
	if v = verdict.Judge(verdict.Input{Load: l, System: rep, GeneratorPID: 600}); v.LimitedBy == verdict.Network {
		t.Errorf("loopback target: %s %q", v.LimitedBy, v.Reasons)
	}
}
