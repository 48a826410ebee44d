package probe

import (
	"fmt"
	"math"
	"time"

	"github.com/edgebench/edgebench/probe/machine"
)

// acc accumulates one figure: time-weighted sum and max.
type acc struct {
	sum, w, max float64
	n           int
}

func (a *acc) add(v, w float64) {
	if a.n == 0 || v > a.max {
		a.max = v
	}
	a.sum += v * w
	a.w += w
	a.n++
}

func (a *acc) stat() machine.Stat {
	if a.n == 0 || a.w == 0 {
		return machine.Stat{Max: a.max}
	}
	return machine.Stat{Mean: a.sum / a.w, Max: a.max}
}

func (a *acc) ptr() *machine.Stat {
	if a.n == 0 {
		return nil
	}
	s := a.stat()
	return &s
}

// addOpt adds v when present.
func (a *acc) addOpt(v *float64, w float64) {
	if v != nil {
		a.add(*v, w)
	}
}

func (a *acc) addU(v *uint64, w float64) {
	if v != nil {
		a.add(float64(*v), w)
	}
}

type diskAcc struct {
	partition                       bool
	read, write, riops, wiops, busy acc
}

type netAcc struct {
	rx, tx, rxp, txp             acc
	rxDrop, txDrop, rxErr, txErr float64 // totals over the window
}

type tcpAcc struct {
	in, out, retrans acc
	outN, retransN   float64 // totals over the window
}

type procAcc struct {
	name, role, of string
	pid, count     int
	cpu, rss       acc
	rd, wr         float64
	hasIO          bool
	// The cores the processes may run on, over the samples in which they
	// used CPU (ran) and over all samples.
	ran, all       cpuSet
	hasRan, hasAll bool
}

// aggregator streams window samples into a Summary, in bounded memory
// whatever the window's length (one entry per device, interface, core and
// watch).
type aggregator struct {
	start, end time.Time
	n          int
	// pending is the last sample with rates, folded in when the next one
	// comes (or at the summary): until then an edge sample merged with it
	// can replace it.
	pending  *machine.Sample
	last     *machine.Sample       // the latest sample, for a window too short for rates
	base     machine.ThrottleFlags // since-boot flags already set at the start
	throttle *machine.ThrottleFlags

	cpu        [8]acc
	hasCPU     bool
	cores      []acc
	coreIDs    []int
	load1      acc
	ctxt, intr acc

	memTotal                                            uint64
	used, free, avail, cached, buffers, dirty, swapUsed acc

	diskNames []string
	disks     map[string]*diskAcc
	netNames  []string
	nets      map[string]*netAcc
	tcp       tcpAcc

	psi [5]acc

	tempMax          *float64
	freqMin, freqMax float64
	hasFreq          bool
	procs            []procAcc
}

func newAggregator(edge *machine.Sample) *aggregator {
	g := &aggregator{disks: map[string]*diskAcc{}, nets: map[string]*netAcc{}, start: edge.Time, end: edge.Time}
	if edge.Throttle != nil {
		g.base = edge.Throttle.SinceBoot
	}
	g.instant(edge)
	return g
}

// add folds one sample into the window. Samples without an interval (the
// first of a probe) carry no rates and weigh nothing.
func (g *aggregator) add(s *machine.Sample) {
	g.instant(s)
	g.flush()
	if s.Seconds > 0 {
		g.end = s.Time
		g.pending = s
	}
}

// replaceLast folds in a sample that covers the last one's slice and its
// own: it replaces the last sample's rates. When the last sample was the
// window's start, the merged slice reaches before the window: the window
// is too short to have rates, and only the sample's instant counts.
func (g *aggregator) replaceLast(s *machine.Sample) {
	g.instant(s)
	g.end = s.Time
	if g.pending != nil && s.Seconds > 0 {
		g.pending = s
	}
}

// flush folds in the pending sample's rates.
func (g *aggregator) flush() {
	if s := g.pending; s != nil {
		g.pending = nil
		g.n++
		g.rates(s, s.Seconds)
	}
}

// instant folds in what a sample says about its instant, not its interval:
// throttling, temperature, frequency. The window's start edge counts.
func (g *aggregator) instant(s *machine.Sample) {
	g.last = s
	if s.Throttle != nil {
		// Now bits, plus since-boot bits that were not set at the start:
		// the condition happened between two samples.
		t := s.Throttle
		seen := t.Now.Or(machine.ThrottleFlags{
			UnderVoltage:  t.SinceBoot.UnderVoltage && !g.base.UnderVoltage,
			FreqCapped:    t.SinceBoot.FreqCapped && !g.base.FreqCapped,
			Throttled:     t.SinceBoot.Throttled && !g.base.Throttled,
			SoftTempLimit: t.SinceBoot.SoftTempLimit && !g.base.SoftTempLimit,
		})
		if g.throttle == nil {
			g.throttle = &machine.ThrottleFlags{}
		}
		*g.throttle = g.throttle.Or(seen)
	}
	// Instantaneous figures count at the edges too.
	for _, t := range s.Temps {
		if g.tempMax == nil {
			v := t.Celsius
			g.tempMax = &v
		}
		*g.tempMax = math.Max(*g.tempMax, t.Celsius)
	}
	if len(s.FreqMHz) > 0 {
		f := s.FreqMHz[0]
		for _, x := range s.FreqMHz[1:] {
			f = math.Max(f, x)
		}
		if !g.hasFreq || f < g.freqMin {
			g.freqMin = f
		}
		if !g.hasFreq || f > g.freqMax {
			g.freqMax = f
		}
		g.hasFreq = true
	}
}

// rates folds in a sample's interval figures, weighted by its length.
func (g *aggregator) rates(s *machine.Sample, w float64) {
	if c := s.CPU; c != nil {
		g.hasCPU = true
		for i, v := range [8]float64{c.User, c.Nice, c.System, c.Idle, c.IOWait, c.IRQ, c.SoftIRQ, c.Steal} {
			g.cpu[i].add(v, w)
		}
	}
	for _, c := range s.PerCPU {
		i := indexOf(g.coreIDs, c.ID)
		if i < 0 {
			g.coreIDs = append(g.coreIDs, c.ID)
			g.cores = append(g.cores, acc{})
			i = len(g.cores) - 1
		}
		g.cores[i].add(c.Busy(), w)
	}
	if s.Load != nil {
		g.load1.add(s.Load.Load1, w)
	}
	g.ctxt.addOpt(s.ContextSwitches, w)
	g.intr.addOpt(s.Interrupts, w)
	if m := s.Mem; m != nil {
		g.memTotal = m.Total
		g.used.add(float64(m.Used), w)
		g.free.add(float64(m.Free), w)
		g.avail.addU(m.Available, w)
		g.cached.addU(m.Cached, w)
		g.buffers.addU(m.Buffers, w)
		g.dirty.addU(m.Dirty, w)
		g.swapUsed.addU(m.SwapUsed, w)
	}
	for _, d := range s.Disks {
		a := g.disks[d.Name]
		if a == nil {
			a = &diskAcc{partition: d.Partition}
			g.disks[d.Name] = a
			g.diskNames = append(g.diskNames, d.Name)
		}
		a.read.add(d.ReadBps/1024, w)
		a.write.add(d.WriteBps/1024, w)
		a.riops.add(d.ReadIOPS, w)
		a.wiops.add(d.WriteIOPS, w)
		a.busy.add(d.Busy, w)
	}
	for _, n := range s.Nets {
		a := g.nets[n.Name]
		if a == nil {
			a = &netAcc{}
			g.nets[n.Name] = a
			g.netNames = append(g.netNames, n.Name)
		}
		a.rx.add(n.RxBps/1024, w)
		a.tx.add(n.TxBps/1024, w)
		a.rxp.add(n.RxPps, w)
		a.txp.add(n.TxPps, w)
		a.rxDrop += n.RxDrops * w
		a.txDrop += n.TxDrops * w
		a.rxErr += n.RxErrs * w
		a.txErr += n.TxErrs * w
	}
	if t := s.TCP; t != nil {
		g.tcp.in.add(t.InSegs, w)
		g.tcp.out.add(t.OutSegs, w)
		g.tcp.retrans.add(t.RetransSegs, w)
		g.tcp.outN += t.OutSegs * w
		g.tcp.retransN += t.RetransSegs * w
	}
	if p := s.PSI; p != nil {
		for i, v := range [5]*float64{p.CPUSome, p.IOSome, p.IOFull, p.MemSome, p.MemFull} {
			g.psi[i].addOpt(v, w)
		}
	}
	for i, p := range s.Procs {
		if i >= len(g.procs) {
			g.procs = append(g.procs, procAcc{})
		}
		a := &g.procs[i]
		a.name, a.pid, a.role, a.of = p.Name, p.PID, p.Role, p.Of
		a.count = max(a.count, p.Count)
		a.cpu.addOpt(p.CPU, w)
		a.rss.addU(p.RSS, w)
		for _, id := range p.CPUs {
			if id >= 0 && id < maxCPUs {
				a.all.set(id)
				a.hasAll = true
				if p.CPU != nil && *p.CPU > 0 {
					a.ran.set(id)
					a.hasRan = true
				}
			}
		}
		if p.ReadBps != nil && p.WriteBps != nil {
			a.hasIO = true
			a.rd += *p.ReadBps * w / 1024
			a.wr += *p.WriteBps * w / 1024
		}
	}
}

// instants returns what s says about its instant, not its slice: load,
// memory, and the watched processes' count and RSS.
func instants(s *machine.Sample) *machine.Sample {
	out := &machine.Sample{Time: s.Time, Load: s.Load, Mem: s.Mem}
	for _, p := range s.Procs {
		out.Procs = append(out.Procs, machine.Proc{Name: p.Name, PID: p.PID, Role: p.Role, Of: p.Of, Count: p.Count, RSS: p.RSS, CPUs: p.CPUs})
	}
	return out
}

func indexOf(ids []int, id int) int {
	for i, x := range ids {
		if x == id {
			return i
		}
	}
	return -1
}

func (g *aggregator) summary() machine.Summary {
	g.flush()
	if g.n == 0 && g.last != nil {
		// A window too short to measure a rate still has its end's
		// memory, load and processes.
		g.rates(instants(g.last), 1)
	}
	s := machine.Summary{Start: g.start, End: g.end, Seconds: g.end.Sub(g.start).Seconds(), Samples: g.n, Throttled: g.throttle}
	if g.hasCPU {
		c := g.cpu
		s.CPU = &machine.CPUSummary{User: c[0].stat(), Nice: c[1].stat(), System: c[2].stat(), Idle: c[3].stat(), IOWait: c[4].stat(),
			IRQ: c[5].stat(), SoftIRQ: c[6].stat(), Steal: c[7].stat()}
	}
	for i, id := range g.coreIDs {
		s.PerCPUBusy = append(s.PerCPUBusy, machine.CoreStat{ID: id, Stat: g.cores[i].stat()})
	}
	s.Load1 = g.load1.ptr()
	s.ContextSwitches = g.ctxt.ptr()
	s.Interrupts = g.intr.ptr()
	if g.used.n > 0 {
		s.Mem = &machine.MemSummary{Total: g.memTotal, Used: g.used.stat(), Free: g.free.stat(), Available: g.avail.ptr(),
			Cached: g.cached.ptr(), Buffers: g.buffers.ptr(), Dirty: g.dirty.ptr(), SwapUsed: g.swapUsed.ptr()}
	}
	for _, name := range g.diskNames {
		a := g.disks[name]
		s.Disks = append(s.Disks, machine.DiskSummary{Name: name, Partition: a.partition, ReadKBs: a.read.stat(), WriteKBs: a.write.stat(),
			ReadIOPS: a.riops.stat(), WriteIOPS: a.wiops.stat(), Busy: a.busy.stat()})
	}
	for _, name := range g.netNames {
		a := g.nets[name]
		s.Nets = append(s.Nets, machine.NetSummary{Name: name, RxKBs: a.rx.stat(), TxKBs: a.tx.stat(), RxPps: a.rxp.stat(), TxPps: a.txp.stat(),
			RxDrops: new(math.Round(a.rxDrop)), TxDrops: new(math.Round(a.txDrop)), RxErrs: new(math.Round(a.rxErr)), TxErrs: new(math.Round(a.txErr))})
	}
	if t := &g.tcp; t.out.n > 0 {
		s.TCP = &machine.TCPSummary{InSegs: t.in.stat(), OutSegs: t.out.stat(), RetransSegs: t.retrans.stat(),
			Out: math.Round(t.outN), Retrans: math.Round(t.retransN)}
	}
	if g.psi[0].n+g.psi[1].n+g.psi[2].n+g.psi[3].n+g.psi[4].n > 0 {
		s.PSI = &machine.PSISummary{CPUSome: g.psi[0].ptr(), IOSome: g.psi[1].ptr(), IOFull: g.psi[2].ptr(), MemSome: g.psi[3].ptr(), MemFull: g.psi[4].ptr()}
	}
	s.TempMaxC = g.tempMax
	if g.hasFreq {
		lo, hi := g.freqMin, g.freqMax
		s.FreqMinMHz, s.FreqMaxMHz = &lo, &hi
	}
	for _, a := range g.procs {
		ps := machine.ProcSummary{Name: a.name, PID: a.pid, Role: a.role, Of: a.of, Count: a.count, CPU: a.cpu.ptr(), RSS: a.rss.ptr()}
		if a.hasIO {
			rd, wr := a.rd, a.wr
			ps.ReadKB, ps.WriteKB = &rd, &wr
		}
		switch {
		case a.hasRan:
			ps.CPUs = a.ran.list()
		case a.hasAll:
			ps.CPUs = a.all.list()
		}
		s.Procs = append(s.Procs, ps)
	}
	return s
}

// freqDropRatio: a fastest-core frequency under this share of the window's
// highest is reported as a drop.
const freqDropRatio = 0.9

// warnings says what makes the window's figures suspect.
func warnings(s *machine.Summary) []string {
	var out []string
	if t := s.Throttled; t != nil && t.Any() {
		out = append(out, "the board reported "+t.String()+" during the measured window")
	}
	if s.FreqMinMHz != nil && *s.FreqMinMHz < freqDropRatio**s.FreqMaxMHz {
		out = append(out, fmt.Sprintf("CPU frequency dropped to %.0f MHz during the measured window (max %.0f MHz)", *s.FreqMinMHz, *s.FreqMaxMHz))
	}
	for _, p := range s.Procs {
		switch {
		case p.Count == 0 && p.PID > 0:
			out = append(out, fmt.Sprintf("watched process %d: not running during the measured window", p.PID))
		case p.Count == 0:
			out = append(out, fmt.Sprintf("watched process %q: none of that name ran during the measured window (--watch takes a command name as in ps -e, or a PID)", p.Name))
		}
	}
	return out
}
