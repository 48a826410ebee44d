package measure

import (
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/edgebench/edgebench/loadgen"
	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/probe/machine"
	"github.com/edgebench/edgebench/wire"
)

// This file maps the load generator's and the probe's results onto the
// wire schema (FromRun, FromSystem, SpecOf, RepeatOf, FingerprintOf), so
// that a device sends what `edgebench run` printed. The collector maps
// them back for its reports (collector/rebuild: LoadResult, SystemReport).

// The significant digits of the histograms on the wire: latency and
// connect times, then waiting and processing times.
const (
	WireDigits      = 3
	WirePhaseDigits = 2
)

// FromRun converts one measured run and what the probe saw during it (nil
// with --no-probe).
func FromRun(res *report.LoadResult, sys *machine.Report) wire.Run {
	r := wire.Run{
		StartedAt:   res.Start.UTC(),
		DurationUS:  res.Duration.Microseconds(),
		Interrupted: res.Interrupted,
		Completed:   res.Completed,
		OK:          res.OK,
		Errors:      errorCounts(res.Errors),
		Bytes:       res.Bytes, BodyBytes: res.BodyBytes, Connects: res.Connects,
		DocLength: res.DocLength, Server: res.Server, WarmupRequests: res.WarmupRequests,
		StatusCodes: statusCounts(res.StatusCodes), Sent: res.Sent, KeepAliveResponses: res.KeepAliveResponses,
		Loops: res.Loops,
	}
	if d := res.Drained; d.Requests > 0 {
		r.Drained = &wire.DrainedCounts{Requests: d.Requests, Completed: d.Completed, OK: d.OK, Errors: errorCounts(d.Errors),
			Cut: d.Cut, StatusCodes: statusCounts(d.StatusCodes), Bytes: d.Bytes, BodyBytes: d.BodyBytes, Connects: d.Connects}
	}
	hist := func(h *report.Histogram, digits int) []byte {
		if h == nil {
			return nil
		}
		if h.Digits() > digits {
			h = h.Coarsen(digits)
		}
		return h.AppendPacked(nil)
	}
	// Latency and connect times keep their 3 digits. Waiting and
	// processing times only feed ab's "Connection Times" table, which
	// shows whole milliseconds: 2 digits (under 1 % error) take an eighth
	// of the bytes.
	r.Latency, r.Connect = hist(res.Latency, WireDigits), hist(res.Connect, WireDigits)
	r.Waiting, r.Processing = hist(res.Waiting, WirePhaseDigits), hist(res.Processing, WirePhaseDigits)
	for _, s := range res.Timeline {
		r.Timeline = append(r.Timeline, wire.Second{T: int32(s.T), Completed: s.Completed, Errors: s.Errors, P50US: s.P50, P99US: s.P99})
	}
	if t := res.TLS; t != nil {
		r.TLS = &wire.TLSRun{Version: t.Version, Cipher: t.Cipher, Group: t.Group, ServerName: t.ServerName, ALPN: t.ALPN,
			KeyBits: t.KeyBits, Resume: t.Resume, Handshakes: t.Handshakes, Resumed: t.Resumed}
		r.Handshake = hist(res.Handshake, WireDigits)
	}
	if h := res.H2; h != nil {
		r.H2 = &wire.H2Run{MaxStreams: h.MaxStreams, GoAways: h.GoAways, Retried: h.Retried, HeaderBytes: h.HeaderBytes}
		for _, name := range slices.Sorted(maps.Keys(h.Resets)) {
			r.H2.Resets = append(r.H2.Resets, wire.CodeCount{Name: name, N: h.Resets[name]})
		}
	}
	if sys != nil {
		r.System = FromSystem(sys, res.Start)
	}
	return r
}

func errorCounts(e report.Errors) wire.ErrorCounts {
	return wire.ErrorCounts{Connect: e.Connect, Read: e.Read, Write: e.Write, Timeout: e.Timeout, Status: e.Status, Length: e.Length,
		TLS: e.TLS, Reset: e.Reset, Limit: e.Limit}
}

// statusCounts lists the counts of m by increasing code.
func statusCounts(m map[int]int64) []wire.StatusCount {
	codes := make([]int, 0, len(m))
	for c := range m {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	var out []wire.StatusCount
	for _, c := range codes {
		out = append(out, wire.StatusCount{Code: c, N: m[c]})
	}
	return out
}

// SpecOf is the RunSpec of a load test's configuration.
func SpecOf(cfg loadgen.Config, repeat int, interval time.Duration, watch []string) wire.RunSpec {
	s := wire.RunSpec{
		URL: cfg.URL, Method: cfg.Method, BodyBytes: int64(len(cfg.Body)), Connections: cfg.Connections,
		Threads: cfg.Threads, Requests: cfg.Requests, DurationMS: cfg.Duration.Milliseconds(), Rate: cfg.Rate,
		KeepAlive: cfg.KeepAlive, TimeoutMS: cfg.Timeout.Milliseconds(), WarmupMS: cfg.Warmup.Milliseconds(),
		NoLengthCheck: !cfg.LengthCheck, Repeat: repeat, IntervalMS: interval.Milliseconds(), Watch: watch,
	}
	switch cfg.Dialect {
	case loadgen.DialectAB:
		s.Mode = "ab"
	case loadgen.DialectWrk:
		s.Mode = "wrk"
	}
	https := strings.HasPrefix(strings.ToLower(cfg.URL), "https:")
	if cfg.HTTP2 {
		s.Protocol, s.Streams = "h2c", max(cfg.Streams, 1)
		if https {
			s.Protocol = "h2"
		}
	}
	if https {
		s.NoTLSResume, s.TLSVersion = cfg.TLS.NoResume, report.TLSVersionName(cfg.TLS.Version)
	}
	if s.Method == "" {
		s.Method = "GET"
	}
	for _, h := range cfg.Headers {
		s.Headers = append(s.Headers, wire.Header{Name: h.Name, Value: h.Value})
	}
	return s
}

// RepeatOf is the wire form of loadgen's spread across repeated runs.
func RepeatOf(s report.Repeated) *wire.Repeat {
	sp := func(x report.Spread) wire.Spread {
		return wire.Spread{Mean: x.Mean, StdDev: x.StdDev, CILow: x.CILow, CIHigh: x.CIHigh, Min: x.Min, Max: x.Max}
	}
	return &wire.Repeat{Runs: s.Runs, RPS: sp(s.RPS), P50US: sp(s.P50), P99US: sp(s.P99), RSDPct: s.RSD}
}

// Units of the wire: basis points, KiB, 0.1 °C.
func bp(pct float64) int32     { return int32(math.Round(pct * 100)) }
func kib(bytes float64) int64  { return int64(math.Round(bytes / 1024)) }
func dc(celsius float64) int32 { return int32(math.Round(celsius * 10)) }
func round64(v float64) int64  { return int64(math.Round(v)) }
func statOf(s machine.Stat, scale func(float64) float64) wire.WindowStat {
	return wire.WindowStat{Mean: round64(scale(s.Mean)), Max: round64(scale(s.Max))}
}
func optStat(s *machine.Stat, scale func(float64) float64) *wire.WindowStat {
	if s == nil {
		return nil
	}
	v := statOf(*s, scale)
	return &v
}
func ident(v float64) float64      { return v }
func pctToBP(v float64) float64    { return v * 100 }
func bytesToKiB(v float64) float64 { return v / 1024 }
func x100(v float64) float64       { return v * 100 }

// names interns names into a table, returning their indexes.
type names struct {
	list  []string
	index map[string]int32
}

func (n *names) of(s string) int32 {
	if i, ok := n.index[s]; ok {
		return i
	}
	if n.index == nil {
		n.index = map[string]int32{}
	}
	i := int32(len(n.list))
	n.list = append(n.list, s)
	n.index[s] = i
	return i
}

// FromSystem converts a probe report; sample times become milliseconds
// after start.
func FromSystem(rep *machine.Report, start time.Time) *wire.System {
	sys := &wire.System{IntervalMS: int64(rep.Interval * 1000), Stride: rep.Stride, Warnings: rep.Warnings}
	var disks, nets, zones, procs names
	partition := map[int32]bool{}
	for _, s := range rep.Samples {
		w := wire.SysSample{T: int32(s.Time.Sub(start).Milliseconds())}
		if c := s.CPU; c != nil {
			w.CPU = &wire.CPUShares{User: bp(c.User), Nice: bp(c.Nice), System: bp(c.System), Idle: bp(c.Idle),
				IOWait: bp(c.IOWait), IRQ: bp(c.IRQ), SoftIRQ: bp(c.SoftIRQ), Steal: bp(c.Steal)}
		}
		for _, c := range s.PerCPU {
			w.CoreBP = append(w.CoreBP, bp(c.Busy()))
		}
		if s.Load != nil {
			v := int32(math.Round(s.Load.Load1 * 100))
			w.Load1 = &v
		}
		w.Ctxt, w.Intr = optRound(s.ContextSwitches), optRound(s.Interrupts)
		w.Running, w.Blocked = optInt32(s.Running), optInt32(s.Blocked)
		if m := s.Mem; m != nil {
			w.Mem = &wire.MemSample{Used: int64(m.Used / 1024), Free: int64(m.Free / 1024), Available: optKiB(m.Available),
				Buffers: optKiB(m.Buffers), Cached: optKiB(m.Cached), Dirty: optKiB(m.Dirty), SwapUsed: optKiB(m.SwapUsed)}
		}
		for _, d := range s.Disks {
			i := disks.of(d.Name)
			partition[i] = d.Partition
			w.Disks = append(w.Disks, wire.DiskRate{I: i, ReadKBs: kib(d.ReadBps), WriteKBs: kib(d.WriteBps),
				ReadIOPS: int32(math.Round(d.ReadIOPS)), WriteIOPS: int32(math.Round(d.WriteIOPS)), BusyBP: bp(d.Busy)})
		}
		for _, n := range s.Nets {
			w.Nets = append(w.Nets, wire.NetRate{I: nets.of(n.Name), RxKBs: kib(n.RxBps), TxKBs: kib(n.TxBps),
				RxPps: round64(n.RxPps), TxPps: round64(n.TxPps), RxDrops: round64(n.RxDrops), TxDrops: round64(n.TxDrops),
				RxErrs: round64(n.RxErrs), TxErrs: round64(n.TxErrs)})
		}
		if t := s.TCP; t != nil {
			w.TCP = &wire.TCPRate{InSegs: round64(t.InSegs), OutSegs: round64(t.OutSegs), RetransSegs: round64(t.RetransSegs)}
		}
		if p := s.PSI; p != nil {
			w.PSI = &wire.PSIShares{CPUSome: optBP(p.CPUSome), IOSome: optBP(p.IOSome), IOFull: optBP(p.IOFull),
				MemSome: optBP(p.MemSome), MemFull: optBP(p.MemFull)}
		}
		for _, t := range s.Temps {
			name := t.Type
			if name == "" {
				name = t.Zone
			}
			i := int(zones.of(name))
			for len(w.TempDC) <= i {
				w.TempDC = append(w.TempDC, math.MinInt32) // a zone this sample lacks
			}
			w.TempDC[i] = dc(t.Celsius)
		}
		for _, f := range s.FreqMHz {
			w.FreqMHz = append(w.FreqMHz, int32(math.Round(f)))
		}
		if s.Throttle != nil {
			v := s.Throttle.Raw
			w.Throttle = &v
		}
		for _, p := range s.Procs {
			pr := wire.ProcRate{I: procs.of(p.Name), PID: int32(p.PID), Count: int32(p.Count)}
			if p.CPU != nil {
				v := bp(*p.CPU)
				pr.CPUBP = &v
			}
			pr.RSSKB = optKiB(p.RSS)
			pr.ReadKBs, pr.WriteKBs = optKiBf(p.ReadBps), optKiBf(p.WriteBps)
			w.Procs = append(w.Procs, pr)
		}
		sys.Samples = append(sys.Samples, w)
	}
	sm := &rep.Summary
	su := wire.SysSummary{Seconds: sm.Seconds, Samples: sm.Samples, Load1: optStat(sm.Load1, x100),
		Ctxt: optStat(sm.ContextSwitches, ident), Intr: optStat(sm.Interrupts, ident)}
	if c := sm.CPU; c != nil {
		su.CPU = &wire.CPUWindow{User: statOf(c.User, pctToBP), Nice: statOf(c.Nice, pctToBP), System: statOf(c.System, pctToBP),
			Idle: statOf(c.Idle, pctToBP), IOWait: statOf(c.IOWait, pctToBP), IRQ: statOf(c.IRQ, pctToBP),
			SoftIRQ: statOf(c.SoftIRQ, pctToBP), Steal: statOf(c.Steal, pctToBP)}
	}
	for _, c := range sm.PerCPUBusy {
		su.CoreBusyBP = append(su.CoreBusyBP, statOf(c.Stat, pctToBP))
	}
	if m := sm.Mem; m != nil {
		su.Mem = &wire.MemWindow{TotalKB: int64(m.Total / 1024), Used: statOf(m.Used, bytesToKiB), Free: statOf(m.Free, bytesToKiB),
			Available: optStat(m.Available, bytesToKiB), Buffers: optStat(m.Buffers, bytesToKiB), Cached: optStat(m.Cached, bytesToKiB),
			Dirty: optStat(m.Dirty, bytesToKiB), SwapUsed: optStat(m.SwapUsed, bytesToKiB)}
	}
	for _, d := range sm.Disks {
		i := disks.of(d.Name)
		partition[i] = d.Partition
		su.Disks = append(su.Disks, wire.DiskWindow{I: i, ReadKBs: statOf(d.ReadKBs, ident), WriteKBs: statOf(d.WriteKBs, ident),
			ReadIOPS: statOf(d.ReadIOPS, ident), WriteIOPS: statOf(d.WriteIOPS, ident), BusyBP: statOf(d.Busy, pctToBP)})
	}
	for _, n := range sm.Nets {
		su.Nets = append(su.Nets, wire.NetWindow{I: nets.of(n.Name), RxKBs: statOf(n.RxKBs, ident), TxKBs: statOf(n.TxKBs, ident),
			RxPps: statOf(n.RxPps, ident), TxPps: statOf(n.TxPps, ident), SpeedMbps: int32(n.SpeedMbps), Duplex: n.Duplex,
			RxDrops: optRound(n.RxDrops), TxDrops: optRound(n.TxDrops), RxErrs: optRound(n.RxErrs), TxErrs: optRound(n.TxErrs)})
	}
	if t := sm.TCP; t != nil {
		su.TCP = &wire.TCPWindow{InSegs: statOf(t.InSegs, ident), OutSegs: statOf(t.OutSegs, ident), RetransSegs: statOf(t.RetransSegs, ident),
			Out: round64(t.Out), Retrans: round64(t.Retrans)}
	}
	if p := sm.Path; p != nil {
		su.Path = &wire.PathWindow{Target: p.Target, Idle: rttWindow(p.Idle), Loaded: rttWindow(p.Loaded), Lost: int32(p.Lost)}
	}
	if p := sm.PSI; p != nil {
		su.PSI = &wire.PSIWindow{CPUSome: optStat(p.CPUSome, pctToBP), IOSome: optStat(p.IOSome, pctToBP), IOFull: optStat(p.IOFull, pctToBP),
			MemSome: optStat(p.MemSome, pctToBP), MemFull: optStat(p.MemFull, pctToBP)}
	}
	if sm.TempMaxC != nil {
		v := dc(*sm.TempMaxC)
		su.TempMaxDC = &v
	}
	su.FreqMinMHz, su.FreqMaxMHz = optRound32(sm.FreqMinMHz), optRound32(sm.FreqMaxMHz)
	if sm.Throttled != nil {
		v := sm.Throttled.Word()
		su.Throttled = &v
	}
	for _, p := range sm.Procs {
		ps := wire.ProcWindow{I: procs.of(p.Name), PID: int32(p.PID), Count: int32(p.Count),
			CPUBP: optStat(p.CPU, pctToBP), RSSKB: optStat(p.RSS, bytesToKiB), Role: p.Role}
		if p.Of != "" {
			of := procs.of(p.Of)
			ps.Of = &of
		}
		ps.ReadKB, ps.WriteKB = optRound(p.ReadKB), optRound(p.WriteKB)
		for _, id := range p.CPUs {
			ps.CPUs = append(ps.CPUs, int32(id))
		}
		su.Procs = append(su.Procs, ps)
	}
	sys.Summary = su
	sys.Disks, sys.Nets, sys.Zones, sys.Procs = disks.list, nets.list, zones.list, procs.list
	if len(partition) > 0 {
		sys.Partitions = make([]bool, len(sys.Disks))
		for i, p := range partition {
			sys.Partitions[i] = p
		}
	}
	return sys
}

// rttWindow is handshake times on the wire, in microseconds.
func rttWindow(r *machine.RTT) *wire.RTTWindow {
	if r == nil {
		return nil
	}
	us := func(ms float64) int64 { return round64(ms * 1000) }
	return &wire.RTTWindow{N: int32(r.N), MinUS: us(r.MinMS), MedianUS: us(r.MedianMS), MaxUS: us(r.MaxMS)}
}

func optRound(v *float64) *int64 {
	if v == nil {
		return nil
	}
	r := round64(*v)
	return &r
}

func optRound32(v *float64) *int32 {
	if v == nil {
		return nil
	}
	r := int32(math.Round(*v))
	return &r
}

func optInt32(v *uint64) *int32 {
	if v == nil {
		return nil
	}
	r := int32(min(*v, math.MaxInt32))
	return &r
}

func optKiB(v *uint64) *int64 {
	if v == nil {
		return nil
	}
	r := int64(*v / 1024)
	return &r
}

func optKiBf(v *float64) *int64 {
	if v == nil {
		return nil
	}
	r := kib(*v)
	return &r
}

func optBP(v *float64) *int32 {
	if v == nil {
		return nil
	}
	r := bp(*v)
	return &r
}
