package probe

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/edgebench/edgebench/probe/machine"
)

// userHZ is the unit of the tick counters in /proc/stat and /proc/PID/stat:
// USER_HZ, 100 on every Linux architecture the probe runs on.
const userHZ = 100

const (
	statRel      = "proc/stat"
	loadavgRel   = "proc/loadavg"
	meminfoRel   = "proc/meminfo"
	diskstatsRel = "proc/diskstats"
	netDevRel    = "proc/net/dev"
	throttledRel = "sys/devices/platform/soc/soc:firmware/get_throttled"
	modelRel     = "proc/device-tree/model"
)

var pressureRels = [3]string{"proc/pressure/cpu", "proc/pressure/io", "proc/pressure/memory"}

// Probe samples the machine below a root directory. It keeps the kernel
// files it reads every interval open; Close releases them. A Probe is not
// safe for concurrent use (a Recorder owns its Probe while it records).
type Probe struct {
	r        *fileReader
	now      func() time.Time
	pageSize uint64

	discovered bool
	missing    map[string]bool // sources seen absent: not retried
	thermal    []thermalZone
	freqRels   []string
	classBlock bool // sys/class/block exists: ask it which devices are partitions
	partition  map[string]bool
	names      map[string]string
	links      map[string]linkInfo // speed and duplex by interface: read once (link)

	// Three snapshots: the one the next sample fills (cur), the last one
	// (prev) and the one before it (older), which a merged sample measures
	// from.
	snaps               [3]snapshot
	cur, prev, older    int
	havePrev, haveOlder bool

	watches []*watchState
	nsample int
}

type thermalZone struct{ rel, zone, typ string }

// snapshot holds the counters of one sample, kept to derive the next rates.
type snapshot struct {
	t       time.Time
	stat    statSnap
	statOK  bool
	disks   []diskCounters
	disksOK bool
	nets    []netCounters
	netsOK  bool
	tcp     tcpCounters
	tcpOK   bool
	psi     [3]psiTotals
	psiOK   [3]bool
	// ticks are every process's CPU ticks, read while a row looks for
	// its upstreams early (upstreamPending); nil otherwise.
	ticks map[int]uint64
}

// New returns a Probe reading proc/... and sys/... below root; "" or "/" is
// the live machine.
func New(root string) *Probe {
	return &Probe{
		r:        newFileReader(cleanRoot(root)),
		now:      time.Now,
		pageSize: uint64(os.Getpagesize()),
		missing:  map[string]bool{},
		prev:     1,
		older:    2,
	}
}

// Root returns the directory the probe reads below.
func (p *Probe) Root() string { return p.r.root }

// Close releases the files the probe keeps open. The probe can still be used
// after it; it reopens them.
func (p *Probe) Close() error { return p.r.close() }

// SetWatches sets the processes the following samples report. It resets
// their state: their CPU % and IO rates start again with the next sample.
func (p *Probe) SetWatches(ws []Watch) {
	for _, w := range p.watches {
		w.release(p.r)
	}
	p.watches = p.watches[:0]
	for _, w := range ws {
		p.watches = append(p.watches, newWatchState(w))
	}
}

// setRoot points the probe at another tree, keeping its previous snapshot:
// tests use it to step from a t0 fixture to t1.
func (p *Probe) setRoot(root string) {
	p.r.close()
	p.r.root = cleanRoot(root)
	p.discovered = false
	p.missing = map[string]bool{}
	for _, w := range p.watches {
		w.closeFiles(p.r)
	}
}

// discover finds, once, the sources that are globbed rather than fixed:
// thermal zones, cpufreq directories, whether get_throttled exists.
func (p *Probe) discover() {
	if p.discovered {
		return
	}
	p.discovered = true
	p.thermal = p.thermal[:0]
	p.freqRels = p.freqRels[:0]
	if p.partition == nil {
		p.partition = map[string]bool{}
		p.names = map[string]string{}
	}
	zones, _ := filepath.Glob(p.r.path("sys/class/thermal/thermal_zone*"))
	sort.Slice(zones, func(i, j int) bool { return naturalLess(zones[i], zones[j]) })
	for _, z := range zones {
		zone := filepath.Base(z)
		rel := "sys/class/thermal/" + zone + "/temp"
		if !p.r.exists(rel) {
			continue
		}
		typ := ""
		if b, err := p.r.read("sys/class/thermal/"+zone+"/type", false); err == nil {
			typ = string(trimSpace(b))
		}
		p.thermal = append(p.thermal, thermalZone{rel: rel, zone: zone, typ: typ})
	}
	cpus, _ := filepath.Glob(p.r.path("sys/devices/system/cpu/cpu[0-9]*"))
	sort.Slice(cpus, func(i, j int) bool { return naturalLess(cpus[i], cpus[j]) })
	for _, c := range cpus {
		rel := "sys/devices/system/cpu/" + filepath.Base(c) + "/cpufreq/scaling_cur_freq"
		if p.r.exists(rel) {
			p.freqRels = append(p.freqRels, rel)
		}
	}
	if !p.r.exists(throttledRel) {
		p.missing[throttledRel] = true
	}
	p.classBlock = p.r.exists("sys/class/block")
}

// naturalLess orders cpu2 before cpu10.
func naturalLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// read reads a source kept open across samples; a source found absent once
// is not tried again.
func (p *Probe) read(rel string) ([]byte, error) {
	if p.missing[rel] {
		return nil, os.ErrNotExist
	}
	b, err := p.r.read(rel, true)
	if errors.Is(err, os.ErrNotExist) {
		p.missing[rel] = true
	}
	return b, err
}

// intern returns b as a string, the same string every sample.
func (p *Probe) intern(b []byte) string {
	if s, ok := p.names[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(p.names) < 4096 {
		p.names[s] = s
	}
	return s
}

// Sample takes a snapshot and returns the figures: rates against the
// previous snapshot, instantaneous values at this one. The sample is never
// nil; err lists the sources that exist but could not be read or parsed
// (their figures are absent). Sources that do not exist are absent, without
// an error.
func (p *Probe) Sample() (*machine.Sample, error) { return p.sample(false) }

// sample is Sample; with merge its rates are measured from the snapshot
// before the previous one, so the sample covers the previous slice and this
// one: a Recorder merges a slice too short to measure into its neighbour
// that way. Without such a snapshot a merged sample has no rates.
func (p *Probe) sample(merge bool) (*machine.Sample, error) {
	p.discover()
	p.nsample++
	now := p.now()
	cur := &p.snaps[p.cur]
	prev, havePrev := &p.snaps[p.prev], p.havePrev
	if merge {
		prev, havePrev = &p.snaps[p.older], p.haveOlder
	}
	cur.t = now
	var dt float64
	if havePrev {
		dt = now.Sub(prev.t).Seconds()
	}
	rates := havePrev && dt > 0

	s := &machine.Sample{Time: now}
	if rates {
		s.Seconds = dt
	}
	a := newArena(24+2*len(p.watches), 8+len(p.watches))
	var errs []error
	fail := func(rel string, err error) {
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		if strings.HasPrefix(err.Error(), "read ") {
			errs = append(errs, err)
			return
		}
		errs = append(errs, fmt.Errorf("%s: %w", p.r.path(rel), err))
	}

	// /proc/stat: CPU shares, context switches, interrupts.
	b, err := p.read(statRel)
	if err == nil {
		err = parseStat(b, &cur.stat)
	}
	cur.statOK = err == nil
	fail(statRel, err)
	if cur.statOK {
		st := &cur.stat
		if st.hasRun {
			s.Running = a.u(st.running)
		}
		if st.hasBlockd {
			s.Blocked = a.u(st.blocked)
		}
	}
	if rates && cur.statOK && prev.statOK {
		p.cpuRates(s, &prev.stat, &cur.stat, dt, a)
	}

	if b, err := p.read(loadavgRel); err == nil {
		l, err := parseLoadavg(b)
		if err == nil {
			s.Load = &l
		}
		fail(loadavgRel, err)
	} else {
		fail(loadavgRel, err)
	}

	if b, err := p.read(meminfoRel); err == nil {
		m, err := parseMeminfo(b)
		if err == nil {
			s.Mem = m.memory(a)
		}
		fail(meminfoRel, err)
	} else {
		fail(meminfoRel, err)
	}

	p.diskSample(s, prev, cur, rates, dt, fail)
	p.netSample(s, prev, cur, rates, dt, fail)
	p.tcpSample(s, prev, cur, rates, dt, fail)
	p.psiSample(s, prev, cur, rates, dt, a, fail)

	for _, z := range p.thermal {
		b, err := p.read(z.rel)
		if err == nil {
			var c float64
			if c, err = parseMilli(b); err == nil {
				s.Temps = append(s.Temps, machine.Temp{Zone: z.zone, Type: z.typ, Celsius: c})
			}
		}
		fail(z.rel, err)
	}
	for _, rel := range p.freqRels {
		b, err := p.read(rel)
		if err == nil {
			var mhz float64
			if mhz, err = parseMilli(b); err == nil {
				if s.FreqMHz == nil {
					s.FreqMHz = make([]float64, 0, len(p.freqRels))
				}
				s.FreqMHz = append(s.FreqMHz, mhz)
			}
		}
		fail(rel, err)
	}
	if b, err := p.read(throttledRel); err == nil {
		t, err := parseThrottled(b)
		if err == nil {
			s.Throttle = &t
		}
		fail(throttledRel, err)
	} else {
		fail(throttledRel, err)
	}

	if len(p.watches) > 0 {
		// A process (or a name's processes) cannot use more than every
		// core: whole ticks read at slightly different moments can add up
		// to a little more over a short slice.
		maxCPU := math.Inf(1)
		if cur.statOK && len(cur.stat.cpus) > 1 {
			maxCPU = float64(100 * (len(cur.stat.cpus) - 1))
		}
		s.Procs = make([]machine.Proc, 0, len(p.watches))
		for _, w := range p.watches {
			s.Procs = append(s.Procs, w.sample(p, dt, merge, maxCPU, a))
		}
		var from map[int]uint64
		if havePrev {
			from = prev.ticks
		}
		p.upstreams(s, dt, merge, maxCPU, a, from)
	}
	cur.ticks = nil
	if p.upstreamPending() {
		cur.ticks = p.allTicks()
	}

	if merge {
		// older stays: it starts the merged slice.
		p.cur, p.prev = p.prev, p.cur
	} else {
		p.cur, p.prev, p.older = p.older, p.cur, p.prev
		p.haveOlder = p.havePrev
	}
	p.havePrev = true
	return s, errors.Join(errs...)
}

func (p *Probe) cpuRates(s *machine.Sample, prev, cur *statSnap, dt float64, a *arena) {
	if c, ok := cpuShares(&prev.cpus[0], &cur.cpus[0]); ok {
		s.CPU = &c
	}
	if len(cur.cpus) > 1 {
		s.PerCPU = make([]machine.CoreCPU, 0, len(cur.cpus)-1)
		for i := 1; i < len(cur.cpus); i++ {
			pc := findCPU(prev.cpus, cur.cpus[i].id, i)
			if pc == nil {
				continue
			}
			if c, ok := cpuShares(pc, &cur.cpus[i]); ok {
				s.PerCPU = append(s.PerCPU, machine.CoreCPU{ID: cur.cpus[i].id, CPU: c})
			}
		}
	}
	if cur.hasCtxt && prev.hasCtxt && cur.ctxt >= prev.ctxt {
		s.ContextSwitches = a.f(float64(cur.ctxt-prev.ctxt) / dt)
	}
	if cur.hasIntr && prev.hasIntr && cur.intr >= prev.intr {
		s.Interrupts = a.f(float64(cur.intr-prev.intr) / dt)
	}
}

// findCPU finds core id in cpus, trying index hint first.
func findCPU(cpus []cpuTimes, id, hint int) *cpuTimes {
	if hint < len(cpus) && cpus[hint].id == id {
		return &cpus[hint]
	}
	for i := 1; i < len(cpus); i++ {
		if cpus[i].id == id {
			return &cpus[i]
		}
	}
	return nil
}

func (p *Probe) diskSample(s *machine.Sample, prev, cur *snapshot, rates bool, dt float64, fail func(string, error)) {
	cur.disks = cur.disks[:0]
	cur.disksOK = false
	b, err := p.read(diskstatsRel)
	if err == nil {
		err = parseDiskstats(b, func(name []byte, c diskCounters) {
			c.name = p.intern(name)
			cur.disks = append(cur.disks, c)
		})
		cur.disksOK = err == nil
	}
	fail(diskstatsRel, err)
	if !rates || !cur.disksOK || !prev.disksOK {
		return
	}
	s.Disks = make([]machine.Disk, 0, len(cur.disks))
	for i := range cur.disks {
		c := &cur.disks[i]
		pd := findDisk(prev.disks, c.name, i)
		if pd == nil {
			continue
		}
		if d, ok := diskRates(pd, c, dt); ok {
			d.Partition = p.isPartition(c.name, cur.disks)
			s.Disks = append(s.Disks, d)
		}
	}
}

func findDisk(ds []diskCounters, name string, hint int) *diskCounters {
	if hint >= 0 && hint < len(ds) && ds[hint].name == name {
		return &ds[hint]
	}
	for i := range ds {
		if ds[i].name == name {
			return &ds[i]
		}
	}
	return nil
}

// isPartition asks sys/class/block/NAME/partition, once per name, or guesses
// from the names when there is no sysfs.
func (p *Probe) isPartition(name string, all []diskCounters) bool {
	if v, ok := p.partition[name]; ok {
		return v
	}
	var v bool
	if p.classBlock {
		v = p.r.exists("sys/class/block/" + name + "/partition")
	} else {
		v = isPartitionName(name, func(n string) bool { return findDisk(all, n, -1) != nil })
	}
	if len(p.partition) < 4096 {
		p.partition[name] = v
	}
	return v
}

func (p *Probe) netSample(s *machine.Sample, prev, cur *snapshot, rates bool, dt float64, fail func(string, error)) {
	cur.nets = cur.nets[:0]
	cur.netsOK = false
	b, err := p.read(netDevRel)
	if err == nil {
		err = parseNetDev(b, func(name []byte, c netCounters) {
			c.name = p.intern(name)
			p.link(c.name) // read once, when the interface is first seen
			cur.nets = append(cur.nets, c)
		})
		cur.netsOK = err == nil
	}
	fail(netDevRel, err)
	if !rates || !cur.netsOK || !prev.netsOK {
		return
	}
	s.Nets = make([]machine.Net, 0, len(cur.nets))
	for i := range cur.nets {
		c := &cur.nets[i]
		var pn *netCounters
		if i < len(prev.nets) && prev.nets[i].name == c.name {
			pn = &prev.nets[i]
		} else {
			for j := range prev.nets {
				if prev.nets[j].name == c.name {
					pn = &prev.nets[j]
				}
			}
		}
		if pn == nil {
			continue
		}
		if n, ok := netRates(pn, c, dt); ok {
			s.Nets = append(s.Nets, n)
		}
	}
}

// tcpSample reads the TCP segment counters of /proc/net/snmp.
func (p *Probe) tcpSample(s *machine.Sample, prev, cur *snapshot, rates bool, dt float64, fail func(string, error)) {
	cur.tcpOK = false
	b, err := p.read(snmpRel)
	if err == nil {
		cur.tcp, err = parseSNMP(b)
		cur.tcpOK = err == nil
	}
	fail(snmpRel, err)
	if !rates || !cur.tcpOK || !prev.tcpOK {
		return
	}
	if t, ok := tcpRates(&prev.tcp, &cur.tcp, dt); ok {
		s.TCP = &t
	}
}

func (p *Probe) psiSample(s *machine.Sample, prev, cur *snapshot, rates bool, dt float64, a *arena, fail func(string, error)) {
	for i, rel := range pressureRels {
		cur.psiOK[i] = false
		b, err := p.read(rel)
		if err == nil {
			cur.psi[i], err = parsePressure(b)
			cur.psiOK[i] = err == nil
		}
		fail(rel, err)
	}
	if !rates {
		return
	}
	var out machine.PSI
	var any bool
	pct := func(i int, full bool) *float64 {
		if !cur.psiOK[i] || !prev.psiOK[i] {
			return nil
		}
		c, pr := cur.psi[i], prev.psi[i]
		if full && !(c.hasFull && pr.hasFull) {
			return nil
		}
		pv, cv := pr.some, c.some
		if full {
			pv, cv = pr.full, c.full
		}
		v, ok := stallPct(pv, cv, dt)
		if !ok {
			return nil
		}
		any = true
		return a.f(v)
	}
	out.CPUSome = pct(0, false)
	out.IOSome = pct(1, false)
	out.IOFull = pct(1, true)
	out.MemSome = pct(2, false)
	out.MemFull = pct(2, true)
	if any {
		s.PSI = &out
	}
}

// pidRel returns "proc/PID/name".
func pidRel(pid int, name string) string {
	return "proc/" + strconv.Itoa(pid) + "/" + name
}
