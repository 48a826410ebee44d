package verdict

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/probe"
	"github.com/edgebench/edgebench/probe/machine"
)

// load is a closed-loop run of n requests over 10 s with latency us each.
func load(n int64, us int64) *report.LoadResult {
	h := report.NewLatencyHistogram()
	for range n {
		h.Record(us)
	}
	return &report.LoadResult{Connections: 10, Threads: 2, Duration: 10 * time.Second,
		Completed: n, OK: n, Latency: h, DocLength: 612}
}

func stat(m float64) machine.Stat { return machine.Stat{Mean: m, Max: m} }
func pstat(m float64) *machine.Stat {
	s := stat(m)
	return &s
}

// sys is a 2-core machine whose cores are busy % busy, with the server
// (nginx, 2 processes) and edgebench (pid 42) at the CPU given.
func sys(busy, server, gen float64) *machine.Report {
	return &machine.Report{Summary: machine.Summary{
		CPU:        &machine.CPUSummary{Idle: stat(100 - busy), User: stat(busy)},
		PerCPUBusy: []machine.CoreStat{{ID: 0, Stat: stat(busy)}, {ID: 1, Stat: stat(busy)}},
		Procs: []machine.ProcSummary{
			{Name: "nginx", PID: 7, Count: 2, CPU: pstat(server)},
			{Name: "edgebench", PID: 42, Count: 1, CPU: pstat(gen)},
		},
	}}
}

func TestJudgeConstructed(t *testing.T) {
	open := func(rate float64, n int64) *report.LoadResult {
		l := load(n, 900_000) // from the scheduled send
		l.Rate = rate
		l.Waiting = report.NewLatencyHistogram()
		for range n {
			l.Waiting.Record(400_000) // the server's own time
		}
		return l
	}
	errs := load(10000, 500)
	errs.Errors.Status = 200
	errs.OK -= 200
	swapped := sys(60, 50, 40)
	swapped.Summary.PSI = &machine.PSISummary{MemSome: pstat(30)}
	disk := sys(40, 30, 30)
	disk.Summary.Disks = []machine.DiskSummary{{Name: "mmcblk0p2", Partition: true, Busy: stat(99)}, {Name: "mmcblk0", Busy: stat(93)}}
	steal := sys(97, 60, 60)
	steal.Summary.CPU.Steal = stat(20)

	cases := []struct {
		name     string
		in       Input
		by       string
		valid    bool
		mentions []string
	}{
		{"nginx one worker at a full core", Input{Load: load(50000, 300), System: sys(96, 99, 80), GeneratorPID: 42}, Server, true, []string{"nginx at 99 % of one core"}},
		{"server at every core", Input{Load: load(50000, 300), System: sys(99, 185, 10), GeneratorPID: 42}, Server, true, []string{"of the 2 cores"}},
		{"generator at its threads", Input{Load: load(50000, 300), System: sys(99, 60, 190), GeneratorPID: 42}, Generator, false, []string{"190 % of 2 cores", "at least this"}},
		{"generator one thread", Input{Load: func() *report.LoadResult { l := load(50000, 300); l.Threads = 1; return l }(), System: sys(99, 60, 95), GeneratorPID: 42}, Generator, false, []string{"95 % of one core"}},
		{"generator pinned and starved", Input{Load: load(50000, 300), System: sys(99, 60, 45), GeneratorPID: 42, GeneratorCPUs: []int{1}}, Generator, false, []string{"cpu1 only", "45 %"}},
		{"pinned but its core free", Input{Load: load(50000, 300), System: func() *machine.Report {
			r := sys(60, 99, 30)
			r.Summary.PerCPUBusy[1].Mean = 40
			return r
		}(), GeneratorPID: 42, GeneratorCPUs: []int{1}}, Server, true, nil},
		{"rate reached", Input{Load: open(100, 1000), System: sys(10, 5, 5), GeneratorPID: 42}, Rate, true, []string{"offered 100 req/s"}},
		{"rate not reached", Input{Load: open(100, 230), System: sys(10, 5, 5), GeneratorPID: 42}, Connections, false, []string{"achieved 23.00 req/s (23 %): the rate was not reached", "at most 25.0 req/s"}},
		{"rate not reached, generator busy", Input{Load: open(100000, 500000), System: sys(99, 60, 170), GeneratorPID: 42}, Generator, false, []string{"the schedule fell behind"}},
		{"errors", Input{Load: errs, System: sys(50, 40, 30), GeneratorPID: 42}, Errors, false, []string{"2.0 % of the requests failed", "status 200"}},
		{"too few requests", Input{Load: load(40, 300)}, Server, false, []string{"only 40 requests"}},
		{"no probe", Input{Load: load(5000, 300)}, Server, true, []string{"without the probe"}},
		{"memory pressure", Input{Load: load(5000, 300), System: swapped, GeneratorPID: 42}, Memory, true, []string{"memory pressure 30 %"}},
		{"disk busy, partitions aside", Input{Load: load(5000, 300), System: disk, GeneratorPID: 42}, Disk, true, []string{"disk mmcblk0 93 % busy"}},
		{"steal", Input{Load: load(5000, 300), System: steal, GeneratorPID: 42}, CPU, true, []string{"steal"}},
		{"other processes take the cores", Input{Load: load(50000, 300), System: sys(100, 29, 26), GeneratorPID: 42}, CPU, false, []string{"other processes took them", "other processes 145 %", "other processes took 145 % of one core while the cores were 100 % busy: the figure is not nginx's alone"}},
		{"server and generator share the cores", Input{Load: load(50000, 300), System: sys(98, 120, 60), GeneratorPID: 42}, CPU, true, []string{"shared by the server and edgebench"}},
	}
	for _, c := range cases {
		v := Judge(c.in)
		if v.LimitedBy != c.by || v.Valid != c.valid {
			t.Errorf("%s: got %s valid=%v (%q), want %s valid=%v", c.name, v.LimitedBy, v.Valid, v.Reasons, c.by, c.valid)
			continue
		}
		all := strings.Join(v.Reasons, " | ")
		for _, m := range c.mentions {
			if !strings.Contains(all, m) {
				t.Errorf("%s: reasons %q lack %q", c.name, all, m)
			}
		}
		if gb, _ := GeneratorBound(c.in); gb != (c.by == Generator) || v.GeneratorBound() != gb {
			t.Errorf("%s: GeneratorBound = %v, verdict %s", c.name, gb, v.LimitedBy)
		}
	}
}

// The thresholds' edges: at the threshold counts, just below does not.
func TestThresholdEdges(t *testing.T) {
	gen := func(cpu float64) Verdict {
		return Judge(Input{Load: load(5000, 300), System: sys(50, 10, cpu), GeneratorPID: 42})
	}
	if v := gen(180); v.LimitedBy != Generator {
		t.Errorf("generator at 90 %% of 2 threads: %s", v.LimitedBy)
	}
	if v := gen(179); v.LimitedBy == Generator {
		t.Errorf("generator at 89.5 %% of 2 threads: %s", v.LimitedBy)
	}
	errAt := func(failed int64) bool {
		l := load(1000, 300)
		l.OK, l.Errors.Timeout = 1000-failed, failed
		return Judge(Input{Load: l}).Valid
	}
	if !errAt(10) || errAt(11) {
		t.Errorf("1 %% errors should be valid, 1.1 %% not: %v %v", errAt(10), errAt(11))
	}
	rate := func(n int64) bool {
		l := load(n, 300)
		l.Rate = 100
		return Judge(Input{Load: l}).Valid
	}
	if !rate(950) || rate(949) {
		t.Errorf("95 %% of the rate should be valid, 94.9 %% not")
	}
	if Judge(Input{Load: load(100, 300)}).Valid != true || Judge(Input{Load: load(99, 300)}).Valid != false {
		t.Errorf("100 requests are enough, 99 not")
	}
}

// record runs the real probe on a fixture tree for a few samples.
func record(t *testing.T, root string) *machine.Report {
	t.Helper()
	p := probe.New(root)
	defer p.Close()
	rec := p.Record(context.Background(), 100*time.Millisecond, nil)
	rec.MarkStart()
	time.Sleep(350 * time.Millisecond)
	rec.MarkEnd()
	return rec.Stop()
}

// On the Pi fixture trees: t1's get_throttled word (0x50005) says
// under-voltage and throttled now, t0's (0x50000) only since boot.
func TestPiFixtureThrottled(t *testing.T) {
	hot := record(t, "../probe/testdata/pi4/t1")
	v := Judge(Input{Load: load(5000, 300), System: hot})
	if v.Valid || !strings.Contains(strings.Join(v.Reasons, " "), "under-voltage, throttled") {
		t.Errorf("throttled Pi: %+v", v)
	}
	calm := record(t, "../probe/testdata/pi4/t0")
	if calm.Summary.Throttled == nil {
		t.Fatal("t0: no get_throttled read")
	}
	if v := Judge(Input{Load: load(5000, 300), System: calm}); !v.Valid {
		t.Errorf("Pi throttled only before the run: %+v", v)
	}
}

func TestInsertText(t *testing.T) {
	text := "GET x\n  requests    1\n  throughput  1 req/s\n  latency     x\n"
	got := InsertText(text, []string{"  verdict     v"})
	want := "GET x\n  requests    1\n  throughput  1 req/s\n  verdict     v\n  latency     x\n"
	if got != want {
		t.Errorf("got %q", got)
	}
	l := load(230, 300)
	l.Rate = 100
	v := Judge(Input{Load: l})
	lines := TextLines(&v, l)
	if len(lines) < 2 || lines[0] != "  rate        offered 100 req/s, achieved 23.00 req/s (23 %)" || !strings.HasPrefix(lines[1], "  verdict     NOT VALID") {
		t.Errorf("lines %q", lines)
	}
}

// The generator's CPU measured outside the probe (a capacity trial's
// rusage) feeds the same rule as the probe's figure, which wins when
// both are there; 0 is not measured.
func TestGeneratorCPUOutsideTheProbe(t *testing.T) {
	open := func(rate float64, n int64) *report.LoadResult {
		l := load(n, 300)
		l.Rate = rate
		return l
	}
	cases := []struct {
		name string
		in   Input
		want bool
		says string
	}{
		{"no probe, its threads at their limit", Input{Load: load(50000, 300), GeneratorCPU: 185, Cores: 2}, true, "185 % of 2 cores"},
		{"no probe, just below", Input{Load: load(50000, 300), GeneratorCPU: 179, Cores: 2}, false, ""},
		{"no probe, one core online", Input{Load: load(50000, 300), GeneratorCPU: 92, Cores: 1}, true, "92 % of one core"},
		{"no probe, its affinity", Input{Load: load(50000, 300), GeneratorCPU: 92, GeneratorCPUs: []int{1}}, true, "92 % of one core"},
		{"no probe, the schedule behind while busy", Input{Load: open(1000, 8000), GeneratorCPU: 150, Cores: 2}, true, "the schedule fell behind (800.0 of 1000 req/s) while edgebench used 150 % of 2 cores"},
		{"no probe, the schedule behind while idle", Input{Load: open(1000, 8000), GeneratorCPU: 20, Cores: 2}, false, ""},
		{"not measured", Input{Load: open(1000, 8000), Cores: 2}, false, ""},
		{"the probe's figure wins", Input{Load: load(50000, 300), System: sys(50, 10, 30), GeneratorPID: 42, GeneratorCPU: 195}, false, ""},
		{"watched server, generator by rusage", Input{Load: load(50000, 300), System: func() *machine.Report {
			r := sys(99, 60, 0)
			r.Summary.Procs = r.Summary.Procs[:1]
			return r
		}(), GeneratorPID: 42, GeneratorCPU: 190}, true, "190 % of 2 cores"},
	}
	for _, c := range cases {
		got, why := GeneratorBound(c.in)
		v := Judge(c.in)
		if got != c.want || v.GeneratorBound() != got || got && (why != v.Reasons[0] || !strings.Contains(why, c.says)) {
			t.Errorf("%s: GeneratorBound %v %q, verdict %s %q", c.name, got, why, v.LimitedBy, v.Reasons)
		}
	}
}

// In open loop the generator's CPU alone is not its limit: an event loop
// spins through the last millisecond before each scheduled send, so one
// loop at 1000 req/s used 100 % of its core (edgebench run --rate 1000 -t
// 1, measured) and sent every request on time. Only the schedule falling
// behind while it is busy makes the generator the limit.
func TestOpenLoopGeneratorCPUIsNotItsLimit(t *testing.T) {
	l := load(10000, 300)
	l.Rate, l.Threads = 1000, 1
	v := Judge(Input{Load: l, System: sys(60, 10, 100), GeneratorPID: 42})
	if v.LimitedBy != Rate || !v.Valid {
		t.Errorf("rate delivered, edgebench at 100 %% of its loop: %s", v.Line())
	}
	short := load(8000, 300)
	short.Rate, short.Threads = 1000, 1
	if v := Judge(Input{Load: short, System: sys(60, 10, 100), GeneratorPID: 42}); v.LimitedBy != Generator || !strings.Contains(v.Reasons[0], "the schedule fell behind (800.0 of 1000 req/s)") {
		t.Errorf("rate short, edgebench at 100 %% of its loop: %s", v.Line())
	}
	if v := Judge(Input{Load: load(10000, 300), System: sys(60, 10, 180), GeneratorPID: 42}); v.LimitedBy != Generator {
		t.Errorf("closed loop, edgebench at 90 %% of its loops: %s", v.Line())
	}
}

// linkSys is sys(20, 10, 10) with nets: eth0 a 100 Mb/s link receiving
// rxBytes a second in rxPkts packets, usb0 a 1000 Mb/s link at 94 Mb/s
// (9.4 %), wlan0 of unknown speed and lo at several times 100 Mb/s.
func linkSys(rxBytes, rxPkts float64) *machine.Report {
	r := sys(20, 10, 10)
	r.Summary.Nets = []machine.NetSummary{
		{Name: "lo", RxKBs: stat(50e6 / 1024), TxKBs: stat(50e6 / 1024), RxPps: stat(40000), TxPps: stat(40000)},
		{Name: "eth0", SpeedMbps: 100, RxKBs: stat(rxBytes / 1024), RxPps: stat(rxPkts), TxKBs: stat(400000.0 / 1024), TxPps: stat(3900)},
		{Name: "usb0", SpeedMbps: 1000, RxKBs: stat(94e6 / 8 / 1024)},
		{Name: "wlan0", RxKBs: stat(30e6 / 1024), RxPps: stat(20000)},
	}
	return r
}

func remote(n int64) *report.LoadResult {
	l := load(n, 300)
	l.Target = report.Target{URL: "http://192.168.2.10/", Host: "192.168.2.10", Port: 80, Path: "/"}
	return l
}

func TestJudgeNetwork(t *testing.T) {
	// 11575300 bytes in 7800 packets a second: 94.1 Mb/s on the wire,
	// each packet with its 24 bytes of framing.
	full := linkSys(11575300, 7800)
	v := Judge(Input{Load: remote(50000), System: full, GeneratorPID: 42})
	if want := "eth0 received 94.1 Mb/s of its 100 Mb/s link (94 %)"; v.LimitedBy != Network || !v.Valid || v.Reasons[0] != want {
		t.Errorf("busy eth0: %s valid=%v %q, want network %q", v.LimitedBy, v.Valid, v.Reasons, want)
	}
	// Sent, not received.
	tx := linkSys(100000, 1000)
	tx.Summary.Nets[1].TxKBs, tx.Summary.Nets[1].TxPps = stat(11.6e6/1024), stat(8000)
	if v := Judge(Input{Load: remote(50000), System: tx, GeneratorPID: 42}); v.LimitedBy != Network || !strings.HasPrefix(v.Reasons[0], "eth0 sent 94.3 Mb/s") {
		t.Errorf("eth0 sending: %s %q", v.LimitedBy, v.Reasons)
	}
	// A loopback target: the run's traffic is on lo, eth0 carried another
	// process's.
	for _, host := range []string{"127.0.0.1", "localhost", "[::1]", "::ffff:127.0.0.2"} {
		l := remote(50000)
		l.Target.Host = host
		if v := Judge(Input{Load: l, System: full, GeneratorPID: 42}); v.LimitedBy == Network {
			t.Errorf("target %s: %s %q", host, v.LimitedBy, v.Reasons)
		}
	}
	if v := Judge(Input{Load: remote(50000), System: full, GeneratorPID: 42, TargetLoopback: true}); v.LimitedBy == Network {
		t.Errorf("target resolved to loopback: %s %q", v.LimitedBy, v.Reasons)
	}
	// eth0 half used: neither usb0 (94 Mb/s of 1000), nor wlan0 (unknown
	// speed), nor lo is the limit.
	if v := Judge(Input{Load: remote(50000), System: linkSys(6e6, 4000), GeneratorPID: 42}); v.LimitedBy == Network {
		t.Errorf("eth0 half used: %s %q", v.LimitedBy, v.Reasons)
	}
	// The threshold: 90 Mb/s of 100 is the limit, a byte a second less not.
	if v := Judge(Input{Load: remote(50000), System: linkSys(90e6/8, 0)}); v.LimitedBy != Network || v.Reasons[0] != "eth0 received 90.0 Mb/s of its 100 Mb/s link (90 %)" {
		t.Errorf("at 90 %%: %s %q", v.LimitedBy, v.Reasons)
	}
	if v := Judge(Input{Load: remote(50000), System: linkSys(90e6/8-1, 0)}); v.LimitedBy == Network {
		t.Errorf("just below 90 %%: %s %q", v.LimitedBy, v.Reasons)
	}
}

// pinned is sys(busy, server, gen) with the server's allowed cores.
func pinned(busy, server, gen float64, cpus ...int) *machine.Report {
	r := sys(busy, server, gen)
	r.Summary.Procs[0].CPUs = cpus
	return r
}

func TestJudgeServerAffinity(t *testing.T) {
	cases := []struct {
		name string
		sys  *machine.Report
		by   string
		want string // the first reason
	}{
		// nginx pinned to core 1 at a full core: its limit, named.
		{"pinned to one core", pinned(75, 99, 50, 1), Server, "nginx at 99 % of cpu1, the one core it may use"},
		// Allowed every core: as without affinity.
		{"allowed every core", pinned(96, 185, 10, 0, 1), Server, "nginx at 185 % of the 2 cores"},
		// 4 workers on core 0 at 95 %: not "each worker holds a core".
		{"four workers on one core", func() *machine.Report {
			r := pinned(60, 95, 20, 0)
			r.Summary.Procs[0].Count = 5
			return r
		}(), Server, "nginx at 95 % of cpu0, the one core it may use"},
		// Pinned to 2 of 4 cores, at 185 %: not "of 4 cores".
		{"two of four cores", func() *machine.Report {
			r := pinned(50, 185, 10, 2, 3)
			r.Summary.PerCPUBusy = append(r.Summary.PerCPUBusy, machine.CoreStat{ID: 2, Stat: stat(93)}, machine.CoreStat{ID: 3, Stat: stat(93)})
			return r
		}(), Server, "nginx at 185 % of cpu2,cpu3, the 2 cores it may use"},
		// Pinned to core 0, which other processes took (95 %, the
		// threshold): the server had 60 % of it, the machine as a whole
		// was not saturated.
		{"its core taken", func() *machine.Report {
			r := pinned(70, 60, 30, 0)
			r.Summary.PerCPUBusy[0].Mean, r.Summary.PerCPUBusy[1].Mean = 95, 40
			return r
		}(), CPU, "cpu0, the one core nginx may use, 95 % busy, nginx 60 % of it: other processes took the rest"},
		// Its core 94 % busy (below 95): no limit of the cores.
		{"its core nearly taken", func() *machine.Report {
			r := pinned(70, 60, 30, 0)
			r.Summary.PerCPUBusy[0].Mean, r.Summary.PerCPUBusy[1].Mean = 94, 40
			return r
		}(), Connections, "nginx at 60 % CPU, 10 connections at 300us per request carry at most 33333.3 req/s; no resource saturated: more connections (-c) or a faster server"},
	}
	for _, c := range cases {
		v := Judge(Input{Load: load(50000, 300), System: c.sys, GeneratorPID: 42})
		if v.LimitedBy != c.by || len(v.Reasons) == 0 || v.Reasons[0] != c.want {
			t.Errorf("%s: %s %q, want %s %q", c.name, v.LimitedBy, v.Reasons, c.by, c.want)
		}
	}
	// At the threshold of the one core: 90 % counts, 89 % not.
	if v := Judge(Input{Load: load(50000, 300), System: pinned(60, 90, 20, 1)}); v.Reasons[0] != "nginx at 90 % of cpu1, the one core it may use" {
		t.Errorf("at 90 %%: %q", v.Reasons)
	}
	if v := Judge(Input{Load: load(50000, 300), System: pinned(60, 89, 20, 1)}); strings.Contains(v.Reasons[0], "may use") {
		t.Errorf("at 89 %%: %q", v.Reasons)
	}
}

// Who had the cores: the kernel's interrupts (loopback traffic) are not
// other processes, a server not watched is not called another process,
// other processes on saturated cores make the figure not the server's,
// and nothing saturated leaves the connections as the limit.
func TestJudgeCPUShares(t *testing.T) {
	irq := sys(100, 29, 26)
	irq.Summary.CPU.SoftIRQ = stat(60)
	irq.Summary.CPU.IRQ = stat(10)
	unwatched := sys(97, 0, 60)
	unwatched.Summary.Procs = unwatched.Summary.Procs[1:]
	oneCore := sys(55, 0, 40)
	oneCore.Summary.Procs = oneCore.Summary.Procs[1:]
	oneCore.Summary.PerCPUBusy[0].Mean, oneCore.Summary.PerCPUBusy[1].Mean = 99, 11
	// other = 2×96 − 100 − edgebench: 49 % and 50 % of one core.
	below, at := sys(96, 100, 43), sys(96, 100, 42)
	quiet := sys(40, 30, 30)
	one := load(50000, 300)
	one.Connections = 1
	cases := []struct {
		name  string
		in    Input
		by    string
		valid bool
		want  string
	}{
		{"interrupts are not other processes", Input{Load: load(50000, 300), System: irq, GeneratorPID: 42}, CPU, true,
			"the cores were 100 % busy, shared by the server and edgebench: nginx 29 %, edgebench 26 %, interrupts 140 %, other processes 5 % of 200 %"},
		{"the server not watched", Input{Load: load(50000, 300), System: unwatched, GeneratorPID: 42}, CPU, true,
			"the cores were 97 % busy: edgebench 60 %, interrupts 0 %, the server (not watched) and other processes 134 % of 200 % (--watch the server to tell it from other processes)"},
		{"one core held", Input{Load: load(50000, 300), System: oneCore, GeneratorPID: 42}, CPU, true,
			"cpu0 was 99 % busy while the machine was 55 %: one thread held it (--watch the server to name it)"},
		{"close to saturated", Input{Load: load(50000, 300), System: sys(85, 60, 40), GeneratorPID: 42}, CPU, true,
			"the cores were 85 % busy, close to saturated: nginx 60 %, edgebench 40 %, interrupts 0 %, other processes 70 % of 200 %"},
		{"below close", Input{Load: load(50000, 300), System: sys(79, 30, 30), GeneratorPID: 42}, Connections, true,
			"nginx at 30 % CPU, 10 connections at 300us per request carry at most 33333.3 req/s; no resource saturated: more connections (-c) or a faster server"},
		{"one connection", Input{Load: one, System: quiet, GeneratorPID: 42}, Connections, true,
			"nginx at 30 % CPU, 1 connection at 300us per request carry at most 3333.3 req/s; no resource saturated: more connections (-c) or a faster server"},
		{"without the probe", Input{Load: load(50000, 300)}, Server, true,
			"10 connections, mean latency 300us; without the probe, the machine was not seen"},
		{"too short for the probe", Input{Load: load(50000, 300), System: &machine.Report{}}, Server, true,
			"10 connections, mean latency 300us; the run was too short for the probe to see the machine"},
	}
	for _, c := range cases {
		v := Judge(c.in)
		if v.LimitedBy != c.by || v.Valid != c.valid || len(v.Reasons) == 0 || v.Reasons[0] != c.want {
			t.Errorf("%s: %s valid=%v %q\nwant %s valid=%v %q", c.name, v.LimitedBy, v.Valid, v.Reasons, c.by, c.valid, c.want)
		}
	}
	// The edge of the other processes' share: 50 % of one core
	// invalidates, 49 % does not.
	if v := Judge(Input{Load: load(50000, 300), System: at, GeneratorPID: 42}); v.Valid || v.Reasons[len(v.Reasons)-1] != "other processes took 50 % of one core while the cores were 96 % busy: the figure is not nginx's alone" {
		t.Errorf("other processes at 50 %%: valid=%v %q", v.Valid, v.Reasons)
	}
	if v := Judge(Input{Load: load(50000, 300), System: below, GeneratorPID: 42}); !v.Valid {
		t.Errorf("other processes at 49 %%: valid=%v %q", v.Valid, v.Reasons)
	}
}
