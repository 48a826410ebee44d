package verdict

import (
	"strings"
	"testing"

	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/probe/machine"
)

// The runs of these tests: a laptop (2 cores) loads a Pi (4 cores) over
// its 100 Mb/s Ethernet. Every figure is set by hand, and every reason is
// checked whole.

// flatLoad is a closed-loop run of 10 connections over 10 s: perSecond
// requests completed in each second (the last one partial), latency us
// each.
func flatLoad(perSecond []int64, us int64) *report.LoadResult {
	var n int64
	for _, c := range perSecond {
		n += c
	}
	l := load(n, us)
	l.Target = report.Target{URL: "http://10.9.0.2/", Host: "10.9.0.2", Port: 80, Path: "/"}
	for i, c := range perSecond {
		l.Timeline = append(l.Timeline, report.Second{T: i, Completed: c})
	}
	return l
}

func steady() []int64 {
	return []int64{5000, 5050, 4950, 5000, 5050, 4950, 5000, 5050, 4950, 2500}
}

// laptop is the loader: 2 cores, busy %, edgebench (pid 42) at gen %, its
// eth0 at 1000 Mb/s, and the handshakes' round-trip times to the target.
func laptop(busy, gen, idleMS, loadedMS float64) *machine.Report {
	return &machine.Report{Summary: machine.Summary{
		CPU:        &machine.CPUSummary{Idle: stat(100 - busy), User: stat(busy)},
		PerCPUBusy: []machine.CoreStat{{ID: 0, Stat: stat(busy)}, {ID: 1, Stat: stat(busy)}},
		Procs:      []machine.ProcSummary{{Name: "edgebench", PID: 42, Count: 1, CPU: pstat(gen)}},
		Nets: []machine.NetSummary{{Name: "lo"}, {Name: "eth0", SpeedMbps: 1000, Duplex: "full",
			RxKBs: stat(4000), RxPps: stat(3000), TxKBs: stat(300), TxPps: stat(2900)}},
		TCP: &machine.TCPSummary{OutSegs: stat(2900), Out: 29_000},
		Path: &machine.PathSummary{Target: "10.9.0.2:80", Idle: &machine.RTT{N: 5, MinMS: idleMS, MedianMS: idleMS, MaxMS: idleMS},
			Loaded: &machine.RTT{N: 40, MinMS: idleMS, MedianMS: loadedMS, MaxMS: 61}},
	}}
}

// pi is the target: 4 cores, busy %, nginx (2 processes) at server % of
// one core, its eth0 at 100 Mb/s sending txKBs KiB/s.
func pi(busy, server, txKBs float64) *machine.Report {
	cores := make([]machine.CoreStat, 4)
	for i := range cores {
		cores[i] = machine.CoreStat{ID: i, Stat: stat(busy)}
	}
	return &machine.Report{Summary: machine.Summary{
		CPU:        &machine.CPUSummary{Idle: stat(100 - busy), User: stat(busy)},
		PerCPUBusy: cores,
		Procs:      []machine.ProcSummary{{Name: "nginx", PID: 812, Count: 2, CPU: pstat(server)}},
		Nets: []machine.NetSummary{{Name: "lo"}, {Name: "eth0", SpeedMbps: 100, Duplex: "full",
			TxKBs: stat(txKBs), TxPps: stat(txKBs / 1.45), RxKBs: stat(300), RxPps: stat(2900)}},
		TCP: &machine.TCPSummary{OutSegs: stat(txKBs / 1.45), Out: txKBs / 1.45 * 10},
	}}
}

func two(l *report.LoadResult, loader, target *machine.Report) TwoInput {
	return TwoInput{Loader: Input{Load: l, System: loader, GeneratorPID: 42}, Target: target}
}

func TestJudgeTwoExactCases(t *testing.T) {
	link := pi(15, 40, 11304)
	link.Summary.Nets[1].TxPps = stat(7800) // 94.1 Mb/s on the wire, framing included
	half := pi(15, 40, 5650)
	half.Summary.Nets[1].TxPps, half.Summary.Nets[1].Duplex = stat(3900), "half"
	half.Summary.Nets[1].SpeedMbps = 50
	busyLinkAndServer := pi(40, 99, 11304)
	busyLinkAndServer.Summary.Nets[1].TxPps = stat(7800)
	retrans := pi(15, 40, 4000)
	retrans.Summary.TCP.Out, retrans.Summary.TCP.Retrans = 100_000, 3000
	retransEdge := pi(15, 40, 4000)
	retransEdge.Summary.TCP.Out, retransEdge.Summary.TCP.Retrans = 100_000, 1000
	retransFew := pi(15, 40, 4000)
	retransFew.Summary.TCP.Out, retransFew.Summary.TCP.Retrans = 900, 9
	disk := pi(15, 40, 4000)
	disk.Summary.Disks = []machine.DiskSummary{{Name: "mmcblk0p2", Partition: true, Busy: stat(99)}, {Name: "mmcblk0", Busy: stat(93)}}
	hot := pi(30, 40, 4000)
	hot.Summary.PerCPUBusy[2].Stat = stat(99)
	hot.Summary.Procs = nil // the server not watched
	hotCore := pi(30, 40, 4000)
	hotCore.Summary.PerCPUBusy[1].Stat = stat(85)
	pinned := pi(30, 97, 4000)
	pinned.Summary.Procs[0].CPUs = []int{3}
	pinned.Summary.PerCPUBusy[3].Stat = stat(99)
	bulk := flatLoad(steady(), 120_000)
	fast := flatLoad(steady(), 800)

	for _, c := range []struct {
		name   string
		in     TwoInput
		by     string
		reason string
	}{
		{"the target's link at its speed", two(flatLoad(steady(), 2000), laptop(20, 30, 0.3, 0.35), link),
			Network, "the target's eth0 sent 94.1 Mb/s of its 100 Mb/s link (94 %)"},
		{"a half-duplex link at its speed", two(flatLoad(steady(), 2000), laptop(20, 30, 0.3, 0.35), half),
			Network, "the target's eth0 sent 47.0 Mb/s of its 50 Mb/s link, half duplex (94 %)"},
		{"the server at its core comes before the link", two(flatLoad(steady(), 2000), laptop(20, 30, 0.3, 0.35), busyLinkAndServer),
			Server, "nginx at 99 % of one core on the target (2 processes): its busy workers each hold a full core"},
		{"the server at the target's 4 cores", two(flatLoad(steady(), 2000), laptop(20, 30, 0.3, 0.35), pi(95, 380, 4000)),
			Server, "nginx at 380 % of the target's 4 cores"},
		{"the server pinned to a core others took", two(flatLoad(steady(), 2000), laptop(20, 30, 0.3, 0.35), pinned),
			Server, "nginx at 97 % of cpu3 on the target, the one core it may use"},
		{"packets lost: the target retransmitted", two(flatLoad(steady(), 2000), laptop(20, 30, 0.3, 0.35), retrans),
			Network, "the target retransmitted 3.0 % of the TCP segments it sent (3000 of 100000): packets were lost between the machines"},
		{"1 % retransmitted is enough", two(flatLoad(steady(), 2000), laptop(20, 30, 0.3, 0.35), retransEdge),
			Network, "the target retransmitted 1.0 % of the TCP segments it sent (1000 of 100000): packets were lost between the machines"},
		{"a queue on the path: the round trip grew by 45 ms", two(bulk, laptop(20, 30, 0.3, 45), pi(15, 40, 4000)),
			Network, "the round-trip time to 10.9.0.2:80 grew from 0.300 ms idle to 45.0 ms under load (median of 40 handshakes, max 61.0 ms), 37 % of a request's mean latency: a queue on the path between the machines; the loader's eth0 received 33.3 Mb/s of its 1000 Mb/s"},
		{"a queue on the path: 5 ms, 3 times the idle round trip", two(bulk, laptop(20, 30, 2.5, 7.5), pi(15, 40, 4000)),
			Network, "the round-trip time to 10.9.0.2:80 grew from 2.50 ms idle to 7.50 ms under load (median of 40 handshakes, max 61.0 ms): a queue on the path between the machines; the loader's eth0 received 33.3 Mb/s of its 1000 Mb/s"},
		{"a queue on the path: a small one, most of each request's time", two(fast, laptop(20, 30, 0.05, 0.65), pi(15, 40, 4000)),
			Network, "the round-trip time to 10.9.0.2:80 grew from 0.050 ms idle to 0.650 ms under load (median of 40 handshakes, max 61.0 ms), 75 % of a request's mean latency: a queue on the path between the machines; the loader's eth0 received 33.3 Mb/s of its 1000 Mb/s"},
		{"the target's disk", two(flatLoad(steady(), 2000), laptop(20, 30, 0.3, 0.35), disk),
			Disk, "the target's disk mmcblk0 93 % busy"},
		{"the target's cores", two(flatLoad(steady(), 2000), laptop(20, 30, 0.3, 0.35), pi(97, 250, 4000)),
			CPU, "the target's cores were 97 % busy: nginx 250 %, interrupts 0 %, other processes 138 % of 400 %"},
		{"the loader's cores", two(flatLoad(steady(), 2000), laptop(97, 60, 0.3, 0.35), pi(15, 40, 4000)),
			CPU, "the loader's cores were 97 % busy: edgebench 60 %, interrupts 0 %, other processes 134 % of 200 %"},
		{"a thread of the target at its core, the server not watched", two(flatLoad(steady(), 2000), laptop(20, 30, 0.3, 0.35), hot),
			CPU, "the target's cpu2 was 99 % busy while the machine was 30 %: one thread held it (watch the server to name it)"},
		{"neither machine saturated, the rate flat", two(flatLoad(steady(), 2000), laptop(20, 30, 0.3, 0.35), pi(15, 40, 4000)),
			Network, "neither machine was saturated: the link or something between them limited the run (4750 req/s, each second within 0.9 %; the loader 20 % busy, edgebench 30 % of one core; the target 15 % busy, nginx 40 % of one core; round trip 0.300 ms idle, 0.350 ms under load)"},
		{"a core of the target close to saturated: not both at rest", two(flatLoad(steady(), 2000), laptop(20, 30, 0.3, 0.35), hotCore),
			Connections, "nginx at 40 % CPU, 10 connections at 2.00ms per request carry at most 5000.0 req/s; no resource saturated on either machine: more connections (-c)"},
		{"the rate not flat", two(flatLoad([]int64{2000, 6000, 3000, 7000, 5000, 2000}, 2000), laptop(20, 30, 0.3, 0.35), pi(15, 40, 4000)),
			Connections, "nginx at 40 % CPU, 10 connections at 2.00ms per request carry at most 5000.0 req/s; no resource saturated on either machine: more connections (-c)"},
		{"edgebench at its event loops", two(flatLoad(steady(), 2000), laptop(96, 190, 0.3, 0.35), pi(15, 40, 4000)),
			Generator, "edgebench itself used 190 % of 2 cores (2 event loops): the server's capacity is at least this"},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := JudgeTwo(c.in)
			if v.LimitedBy != c.by || len(v.Reasons) == 0 || v.Reasons[0] != c.reason {
				t.Errorf("limited by %s: %q\nwant %s: %q", v.LimitedBy, v.Reasons, c.by, c.reason)
			}
		})
	}
}

// The thresholds at their edge: just under each, the rule does not fire.
func TestJudgeTwoEdges(t *testing.T) {
	under := pi(15, 40, 11304)
	under.Summary.Nets[1].TxPps = stat(6500) // 93.9 Mb/s on the wire of a 105 Mb/s link: 89.4 %
	under.Summary.Nets[1].SpeedMbps = 105
	few := pi(15, 40, 4000)
	few.Summary.TCP.Out, few.Summary.TCP.Retrans = 900, 9 // 1 %, but 9 segments
	justUnder := pi(15, 40, 4000)
	justUnder.Summary.TCP.Out, justUnder.Summary.TCP.Retrans = 100_000, 999
	for _, c := range []struct {
		name string
		in   TwoInput
	}{
		{"a link at 89.4 % of its speed", two(flatLoad(steady(), 2000), laptop(20, 30, 0.3, 0.35), under)},
		{"9 segments retransmitted", two(flatLoad(steady(), 2000), laptop(20, 30, 0.3, 0.35), few)},
		{"0.999 % retransmitted", two(flatLoad(steady(), 2000), laptop(20, 30, 0.3, 0.35), justUnder)},
		{"the round trip under 3 times the idle one", two(flatLoad(steady(), 120_000), laptop(20, 30, 2.5, 7.49), pi(15, 40, 4000))},
		{"grown 3 times, by 4.9 ms, 4 % of a request", two(flatLoad(steady(), 120_000), laptop(20, 30, 2.45, 7.35), pi(15, 40, 4000))},
		{"grown by 0.19 ms, most of each request", two(flatLoad(steady(), 250), laptop(20, 30, 0.05, 0.24), pi(15, 40, 4000))},
		{"grown by 0.6 ms, 20 % of each request", two(flatLoad(steady(), 3000), laptop(20, 30, 0.05, 0.65), pi(15, 40, 4000))},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := JudgeTwo(c.in)
			if v.LimitedBy == Network && !strings.HasPrefix(v.Reasons[0], "neither machine") {
				t.Errorf("the network named: %q", v.Reasons)
			}
		})
	}
}

// An idle server is never the limit, whatever else the run shows; one
// that worked is, when nothing else can be.
func TestJudgeTwoNeverBlamesAnIdleServer(t *testing.T) {
	noLatency := flatLoad(steady(), 2000)
	noLatency.Latency = report.NewLatencyHistogram()
	for _, in := range []TwoInput{
		two(flatLoad(steady(), 2000), laptop(20, 30, 0.3, 0.35), pi(15, 2, 4000)),
		two(flatLoad([]int64{1, 9000, 1, 9000, 1}, 2000), laptop(20, 30, 0.3, 0.35), pi(15, 2, 4000)),
		two(noLatency, laptop(20, 30, 0.3, 0.35), pi(15, 2, 4000)),
		two(noLatency, nil, pi(15, 2, 4000)),
	} {
		if v := JudgeTwo(in); v.LimitedBy == Server {
			t.Errorf("an idle server called the limit: %q", v.Reasons)
		}
	}
	noLatency.Timeline = seconds([]int64{1, 9000, 1, 9000, 1})
	if v := JudgeTwo(two(noLatency, laptop(20, 30, 0.3, 0.35), pi(15, 50, 4000))); v.LimitedBy != Server {
		t.Errorf("a busy server, nothing else: %s %q", v.LimitedBy, v.Reasons)
	}
}

// What makes a two-machine figure not valid: the target throttled, other
// processes on the target's saturated cores, and the loader's own
// reasons; without the target's figures, the loader's verdict alone.
func TestJudgeTwoValidity(t *testing.T) {
	throttled := pi(15, 40, 4000)
	throttled.Summary.Throttled = &machine.ThrottleFlags{UnderVoltage: true}
	v := JudgeTwo(two(flatLoad(steady(), 2000), laptop(20, 30, 0.3, 0.35), throttled))
	if v.Valid || v.Reasons[len(v.Reasons)-1] != "the target reported under-voltage during the run (firmware flags): its clock was not its own" {
		t.Errorf("throttled target: %v %q", v.Valid, v.Reasons)
	}
	v = JudgeTwo(two(flatLoad(steady(), 2000), laptop(20, 30, 0.3, 0.35), pi(97, 250, 4000)))
	if v.Valid || v.Reasons[1] != "other processes took 138 % of one core on the target while its cores were 97 % busy: the figure is not nginx's alone" {
		t.Errorf("others on the target: %v %q", v.Valid, v.Reasons)
	}
	short := flatLoad([]int64{40, 10}, 2000)
	if v := JudgeTwo(two(short, laptop(20, 30, 0.3, 0.35), pi(15, 40, 4000))); v.Valid || !strings.Contains(strings.Join(v.Reasons, "; "), "only 50 requests measured") {
		t.Errorf("50 requests: %v %q", v.Valid, v.Reasons)
	}
	if v := JudgeTwo(two(flatLoad(steady(), 2000), laptop(20, 30, 0.3, 0.35), pi(15, 40, 4000))); !v.Valid {
		t.Errorf("a good run not valid: %q", v.Reasons)
	}
	in := two(flatLoad(steady(), 2000), laptop(20, 30, 0.3, 45), nil)
	if got, want := JudgeTwo(in), Judge(in.Loader); got.LimitedBy != want.LimitedBy || strings.Join(got.Reasons, "|") != strings.Join(want.Reasons, "|") {
		t.Errorf("without the target: %+v, want the loader's %+v", got, want)
	}
}

// A run alone, against a target on another machine: the loader's own
// view of the path names the network (saying the target was not seen);
// against loopback, never.
func TestJudgePathAlone(t *testing.T) {
	bulk := flatLoad(steady(), 120_000)
	v := Judge(Input{Load: bulk, System: laptop(20, 30, 0.3, 45), GeneratorPID: 42})
	want := "the round-trip time to 10.9.0.2:80 grew from 0.300 ms idle to 45.0 ms under load (median of 40 handshakes, max 61.0 ms), 37 % of a request's mean latency: a queue on the path between the machines; the loader's eth0 received 33.3 Mb/s of its 1000 Mb/s (the target's machine was not watched)"
	if v.LimitedBy != Network || v.Reasons[0] != want {
		t.Errorf("path alone: %s %q", v.LimitedBy, v.Reasons)
	}
	lossy := laptop(20, 30, 0.3, 0.35)
	lossy.Summary.TCP.Retrans = 600 // of 29,000 sent: 2.1 %
	if v := Judge(Input{Load: bulk, System: lossy, GeneratorPID: 42}); v.LimitedBy != Network ||
		v.Reasons[0] != "the loader retransmitted 2.1 % of the TCP segments it sent (600 of 29000): packets were lost between the machines" {
		t.Errorf("retransmissions alone: %s %q", v.LimitedBy, v.Reasons)
	}
	local := flatLoad(steady(), 120_000)
	local.Target.Host = "127.0.0.1"
	if v := Judge(Input{Load: local, System: laptop(20, 30, 0.3, 45), GeneratorPID: 42}); v.LimitedBy == Network {
		t.Errorf("loopback target: %s %q", v.LimitedBy, v.Reasons)
	}
	if v := Judge(Input{Load: bulk, System: laptop(20, 30, 0.3, 45), GeneratorPID: 42, TargetLoopback: true}); v.LimitedBy == Network {
		t.Errorf("a name of loopback: %s %q", v.LimitedBy, v.Reasons)
	}
}

func TestFlat(t *testing.T) {
	for _, c := range []struct {
		s    []int64
		flat bool
	}{
		{steady(), true},
		{[]int64{100, 100, 100, 1}, true},            // the partial last second left out
		{[]int64{100, 100, 1}, false},                // fewer than 3 full seconds
		{[]int64{100, 110, 100, 100, 110, 5}, true},  // 5.3 %
		{[]int64{100, 120, 100, 100, 120, 5}, false}, // 10.1 %
		{[]int64{100, 130, 100, 100, 130, 5}, false}, // 14.7 %
		{[]int64{0, 0, 0, 0}, false},
	} {
		rsd, ok := Default.flat(&report.LoadResult{Timeline: seconds(c.s)})
		if ok != c.flat {
			t.Errorf("%v: flat %v (rsd %.2f %%), want %v", c.s, ok, rsd, c.flat)
		}
	}
}

func seconds(c []int64) []report.Second {
	var out []report.Second
	for i, n := range c {
		out = append(out, report.Second{T: i, Completed: n})
	}
	return out
}
