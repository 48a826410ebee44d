package probe

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/probe/machine"
)

// simProc is a process of a simulated machine.
type simProc struct {
	pid, ppid int
	comm      string
	cores     float64 // CPU used, in cores
}

// simMachine writes a proc tree whose counters follow a steady load known in
// advance: every core spends fixed shares of its time in each state, each
// process uses a fixed number of cores. Counters are whole USER_HZ ticks (and
// milliseconds for disk busy time), each with its own phase, as the kernel
// shows them: a slice of a few milliseconds sees zero or one tick of a state.
// Files are rewritten in place, so a probe that keeps them open re-reads them.
type simMachine struct {
	t     testing.TB
	dir   string
	ncpu  int
	share [8]float64 // % of each core's time: user nice system idle iowait irq softirq steal
	procs []simProc
	phase map[string]float64
	rng   *rand.Rand
}

func newSimMachine(t testing.TB, rng *rand.Rand, ncpu int, share [8]float64, procs ...simProc) *simMachine {
	t.Helper()
	m := &simMachine{t: t, dir: t.TempDir(), ncpu: ncpu, share: share, procs: procs, phase: map[string]float64{}, rng: rng}
	for _, dir := range []string{"proc/net"} {
		if err := os.MkdirAll(filepath.Join(m.dir, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range procs {
		if err := os.MkdirAll(filepath.Join(m.dir, "proc", strconv.Itoa(p.pid)), 0o755); err != nil {
			t.Fatal(err)
		}
		m.write("proc/"+strconv.Itoa(p.pid)+"/comm", p.comm+"\n")
	}
	return m
}

// count is a counter growing at rate per second, seen at t seconds: whole
// units, with a phase of its own.
func (m *simMachine) count(key string, rate, t float64) uint64 {
	ph, ok := m.phase[key]
	if !ok {
		ph = m.rng.Float64()
		m.phase[key] = ph
	}
	return uint64(math.Floor(rate*t + ph))
}

func (m *simMachine) write(rel, s string) {
	if err := os.WriteFile(filepath.Join(m.dir, rel), []byte(s), 0o644); err != nil {
		m.t.Fatal(err)
	}
}

// at writes the counters as they are t seconds after boot.
func (m *simMachine) at(t float64) {
	var b strings.Builder
	var total [8]uint64
	cores := make([][8]uint64, m.ncpu)
	for c := range m.ncpu {
		for i, sh := range m.share {
			if sh > 0 {
				cores[c][i] = m.count(fmt.Sprintf("cpu%d.%d", c, i), sh*userHZ/100, t)
			}
			total[i] += cores[c][i]
		}
	}
	line := func(name string, v [8]uint64) {
		b.WriteString(name)
		for _, x := range v {
			b.WriteString(" " + strconv.FormatUint(x, 10))
		}
		b.WriteString(" 0 0\n")
	}
	line("cpu ", total)
	for c := range m.ncpu {
		line("cpu"+strconv.Itoa(c), cores[c])
	}
	fmt.Fprintf(&b, "intr %d 0 0\nctxt %d\nprocs_running 3\nprocs_blocked 0\n", m.count("intr", 15000, t), m.count("ctxt", 50000, t))
	m.write("proc/stat", b.String())
	m.write("proc/diskstats", fmt.Sprintf(" 254 0 vda %d 0 %d 0 %d 0 %d 0 0 %d 0\n",
		m.count("reads", 40, t), m.count("rsect", 320, t), m.count("writes", 12, t), m.count("wsect", 96, t), m.count("io_ms", 300, t)))
	m.write("proc/net/dev", fmt.Sprintf("Inter-|   Receive |  Transmit\n face |bytes packets errs drop fifo frame compressed multicast|bytes packets errs drop fifo colls carrier compressed\n"+
		"    lo: %d %d 0 0 0 0 0 0 %[1]d %[2]d 0 0 0 0 0 0\n", m.count("lo.bytes", 2e7, t), m.count("lo.pkts", 9e4, t)))
	for _, p := range m.procs {
		ut := m.count(fmt.Sprint(p.pid, ".u"), 0.4*p.cores*userHZ, t)
		st := m.count(fmt.Sprint(p.pid, ".s"), 0.6*p.cores*userHZ, t)
		dir := "proc/" + strconv.Itoa(p.pid) + "/"
		m.write(dir+"stat", fmt.Sprintf("%d (%s) S %d %d %d 0 -1 4194560 1203 0 0 0 %d %d 0 0 20 0 1 0 1234 14745600 1200 18446744073709551615 1 1 0 0 0 0 0 0 1073741824 0 0 17 0 0 0 0 0 0\n",
			p.pid, p.comm, p.ppid, p.pid, p.pid, ut, st))
	}
}

// simEvent is one thing a run does to its recorder, at a time in seconds.
type simEvent struct {
	at   float64
	what string // tick, start, end, stop
}

// simSchedule draws the times of a run: ticks every interval (a few
// milliseconds late, as a loaded machine delivers them), and an optional
// MarkStart, a MarkEnd and a Stop that often fall a few milliseconds from a
// tick: the edge slices that gave impossible figures.
func simSchedule(rng *rand.Rand, interval float64) []simEvent {
	near := func(base float64) float64 {
		switch rng.IntN(4) {
		case 0: // just after a tick
			return base + rng.Float64()*interval/10
		case 1: // just before the next
			return base + interval - rng.Float64()*interval/10
		case 2: // a few milliseconds after
			return base + rng.Float64()*0.01*interval
		default:
			return base + rng.Float64()*interval
		}
	}
	var ev []simEvent
	start := 0.0
	if rng.IntN(2) == 0 {
		start = near(float64(rng.IntN(3)) * interval)
		ev = append(ev, simEvent{start, "start"})
	}
	end := near(start + float64(rng.IntN(4))*interval)
	if rng.IntN(8) == 0 {
		end = start + rng.Float64()*interval/5 // a window of a few ms: -n 1
	}
	end = max(end, start+1e-6)
	stop := end + []float64{0.001 * interval, rng.Float64() * interval / 10, rng.Float64() * 2 * interval}[rng.IntN(3)]
	ev = append(ev, simEvent{end, "end"}, simEvent{stop, "stop"})
	for k := 1; float64(k)*interval < stop+interval; k++ {
		ev = append(ev, simEvent{float64(k)*interval + rng.Float64()*0.004*interval, "tick"})
	}
	slices.SortStableFunc(ev, func(a, b simEvent) int {
		if a.at < b.at {
			return -1
		}
		if a.at > b.at {
			return 1
		}
		return 0
	})
	return ev
}

// simT0 is when a simulated run starts, on the probe's fake clock.
var simT0 = time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)

// simRun records the machine through the schedule on a fake clock, calling
// the recorder as the agent and `edgebench run` do.
func simRun(t testing.TB, m *simMachine, interval time.Duration, ev []simEvent, watches ...Watch) *machine.Report {
	t.Helper()
	t0 := simT0
	const boot = 1000.0 // seconds of counters before the run
	m.at(boot)
	p := New(m.dir)
	defer p.Close()
	now := t0
	p.now = func() time.Time { return now }
	r := p.record(context.Background(), interval, watches, nil, func() {})
	for _, e := range ev {
		now = t0.Add(time.Duration(e.at * float64(time.Second)))
		m.at(boot + e.at)
		switch e.what {
		case "tick":
			r.tick()
		case "start":
			r.MarkStart()
		case "end":
			r.MarkEnd()
		case "stop":
			return r.Stop()
		}
	}
	t.Fatal("no stop in the schedule")
	return nil
}

// Random timings of a saturated 2-core run, with edge samples a few
// milliseconds from a tick: no figure is impossible, no rate comes from a
// slice shorter than a tenth of the interval, and the shares stay within
// what tick counting allows of the true load.
func TestRecorderNoImpossibleFigure(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 6))
	m := saturatedMachine(t, rng)
	trials := 200
	if testing.Short() {
		trials = 50 // the 32-bit pass under qemu-user
	}
	for trial := range trials {
		recorderTrial(t, m, rng, fmt.Sprint("trial ", trial))
	}
}

// FuzzRecorderTimings is TestRecorderNoImpossibleFigure with the schedule
// and the counters' phases drawn from the fuzzer's seed.
func FuzzRecorderTimings(f *testing.F) {
	for _, seed := range []uint64{0, 1, 9, 1 << 40} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, 6))
		recorderTrial(t, saturatedMachine(t, rng), rng, fmt.Sprint("seed ", seed))
	})
}

// The saturated machine: 2 cores, 15 % user, 55 % system, 28 % softirq,
// 2 % idle; nginx, a master and two workers, using all but 2 % of both
// cores; the load generator beside it.
const simCPUs = 2

var simShare = [8]float64{15, 0, 55, 2, 0, 0, 28, 0}

func saturatedMachine(t testing.TB, rng *rand.Rand) *simMachine {
	return newSimMachine(t, rng, simCPUs, simShare,
		simProc{pid: 812, ppid: 1, comm: "nginx", cores: 0.02},
		simProc{pid: 813, ppid: 812, comm: "nginx", cores: 0.98},
		simProc{pid: 814, ppid: 812, comm: "nginx", cores: 0.98},
		simProc{pid: 1200, ppid: 1, comm: "edgebench", cores: 0.9})
}

// recorderTrial records m through a random schedule and checks every
// figure of the report.
func recorderTrial(t testing.TB, m *simMachine, rng *rand.Rand, name string) {
	t.Helper()
	const ncpu = simCPUs
	share := simShare
	interval := time.Second
	minSlice := interval.Seconds() / 10
	clear(m.phase) // new phases for every counter
	ev := simSchedule(rng, interval.Seconds())
	rep := simRun(t, m, interval, ev, Watch{Name: "nginx"}, Watch{PID: 1200})
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s, schedule %v: %s", name, ev, fmt.Sprintf(format, args...))
	}
	// bound is the most a share of truth % can read over s seconds when
	// every counter is whole ticks: each core's states are off by less
	// than one tick each, four states are non-zero.
	bound := func(truth, s float64, cores int) float64 {
		ticks := s * userHZ * float64(cores)
		return (truth/100*ticks + float64(cores)) / (ticks - 4*float64(cores)) * 100
	}
	checkShares := func(what string, c machine.CPU, s float64, cores int) {
		t.Helper()
		v := [8]float64{c.User, c.Nice, c.System, c.Idle, c.IOWait, c.IRQ, c.SoftIRQ, c.Steal}
		sum := 0.0
		for i, x := range v {
			sum += x
			if x < 0 || x > 100 {
				fail("%s: share %d is %v", what, i, x)
			}
		}
		if math.Abs(sum-100) > 1e-6 {
			fail("%s: shares sum to %v", what, sum)
		}
		if c.User > bound(share[0], s, cores) || c.Idle > bound(share[3], s, cores) {
			fail("%s: usr %.1f idl %.1f over %.3f s, truth 15 and 2", what, c.User, c.Idle, s)
		}
	}
	for i, s := range rep.Samples {
		if s.Seconds == 0 {
			if s.CPU != nil || s.Disks != nil || s.ContextSwitches != nil {
				fail("sample %d has rates without an interval", i)
			}
			continue
		}
		if s.Seconds < minSlice-1e-9 {
			fail("sample %d: rates over %.4f s, less than a tenth of the interval", i, s.Seconds)
		}
		if s.CPU != nil {
			checkShares(fmt.Sprint("sample ", i), *s.CPU, s.Seconds, ncpu)
		}
		for _, c := range s.PerCPU {
			checkShares(fmt.Sprint("sample ", i, " cpu", c.ID), c.CPU, s.Seconds, 1)
		}
		for _, d := range s.Disks {
			if d.Busy < 0 || d.Busy > 100 {
				fail("sample %d: %s busy %v", i, d.Name, d.Busy)
			}
		}
		for _, p := range s.Procs {
			if p.CPU != nil && (*p.CPU < 0 || *p.CPU > 100*ncpu) {
				fail("sample %d: %s at %.1f %% on %d cores", i, p.Name, *p.CPU, ncpu)
			}
		}
	}
	sum := rep.Summary
	var start, end float64
	for _, e := range ev {
		switch e.what {
		case "start":
			start = e.at
		case "end":
			end = e.at
		}
	}
	if math.Abs(sum.Seconds-(end-start)) > 1e-6 {
		fail("window of %v s, want %v", sum.Seconds, end-start)
	}
	if (sum.CPU != nil) != (end-start >= minSlice) {
		fail("window of %.3f s: CPU summary %+v", end-start, sum.CPU)
	}
	if c := sum.CPU; c != nil {
		if c.User.Max > bound(share[0], minSlice, ncpu) || c.Idle.Max > bound(share[3], minSlice, ncpu) || c.System.Max > 100 || c.SoftIRQ.Max > 100 {
			fail("summary cpu %+v", c)
		}
	}
	for _, p := range sum.Procs {
		if p.CPU != nil && p.CPU.Max > 100*ncpu {
			fail("summary: %s max %.1f %% on %d cores", p.Name, p.CPU.Max, ncpu)
		}
	}
}

// The merging rules on a known schedule: a periodic sample a few
// milliseconds after an edge is skipped, an edge a few milliseconds after a
// sample replaces it, the closing sample after the window is dropped when
// too close, and a window shorter than a tenth of the interval has no rates.
func TestRecorderMergesEdgeSlices(t *testing.T) {
	share := [8]float64{15, 0, 55, 2, 0, 0, 28, 0}
	m := newSimMachine(t, rand.New(rand.NewPCG(1, 2)), 2, share, simProc{pid: 812, ppid: 1, comm: "nginx", cores: 1.9})
	times := func(rep *machine.Report) (at, secs []float64) {
		for _, s := range rep.Samples {
			at = append(at, math.Round(s.Time.Sub(simT0).Seconds()*1000)/1000)
			secs = append(secs, math.Round(s.Seconds*1000)/1000)
		}
		return at, secs
	}

	rep := simRun(t, m, time.Second, []simEvent{{1, "tick"}, {1.97, "start"}, {2, "tick"}, {3, "tick"},
		{4, "tick"}, {4.005, "end"}, {4.007, "stop"}}, Watch{Name: "nginx"})
	at, secs := times(rep)
	if !slices.Equal(at, []float64{0, 1, 1.97, 3, 4.005}) || !slices.Equal(secs, []float64{0, 1, 0.97, 1.03, 1.005}) {
		t.Errorf("samples at %v over %v s", at, secs)
	}
	if s := rep.Summary; s.Samples != 2 || math.Abs(s.Seconds-2.035) > 1e-9 || s.CPU == nil || s.Procs[0].CPU == nil {
		t.Errorf("summary over %d samples, %v s, cpu %v, procs %+v", s.Samples, s.Seconds, s.CPU, s.Procs)
	}

	// A window of 47 ms that starts 3 ms after the first sample: the start
	// replaces the first sample, the end replaces the start; neither has a
	// slice to measure. The closing sample, 450 ms later, has.
	rep = simRun(t, m, time.Second, []simEvent{{0.003, "start"}, {0.05, "end"}, {0.5, "stop"}}, Watch{Name: "nginx"})
	at, secs = times(rep)
	if !slices.Equal(at, []float64{0.05, 0.5}) || !slices.Equal(secs, []float64{0, 0.45}) {
		t.Errorf("samples at %v over %v s", at, secs)
	}
	if rep.Samples[1].CPU == nil || rep.Samples[1].Procs[0].CPU == nil {
		t.Errorf("closing sample without rates: %+v", rep.Samples[1])
	}
	// No rate, but the end's instant: the process is there, with its RSS.
	if s := rep.Summary; s.Samples != 0 || math.Abs(s.Seconds-0.047) > 1e-9 || s.CPU != nil || s.ContextSwitches != nil ||
		len(s.Procs) != 1 || s.Procs[0].CPU != nil || s.Procs[0].Count != 1 || s.Procs[0].RSS == nil || s.Procs[0].RSS.Mean != s.Procs[0].RSS.Max {
		t.Errorf("summary of a 47 ms window: %d samples, %v s, cpu %v, procs %+v", s.Samples, s.Seconds, s.CPU, s.Procs)
	}
	var text strings.Builder
	rep.WriteText(&text)
	if !strings.HasPrefix(text.String(), "System (0.047 s measured, too short for rates at a 1 s interval):\n") {
		t.Errorf("text report of a 47 ms window:\n%s", text.String())
	}
}
