package rebuild

import (
	"fmt"
	"time"

	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/probe/machine"
	"github.com/edgebench/edgebench/wire"
)

// This file maps a stored result back onto the load generator's and the
// probe's types, for the reports a device printed: the other way of
// measure.FromRun and FromSystem.

// Errors are the failed requests of a run as the reports count them.
func Errors(e wire.ErrorCounts) report.Errors {
	return report.Errors{Connect: e.Connect, Read: e.Read, Write: e.Write, Timeout: e.Timeout, Status: e.Status, Length: e.Length,
		TLS: e.TLS, Reset: e.Reset, Limit: e.Limit}
}

// statusMap is the status counts of l by code.
func statusMap(l []wire.StatusCount) map[int]int64 {
	m := map[int]int64{}
	for _, c := range l {
		m[c.Code] += c.N
	}
	return m
}

// RunSpec is the spec res's runs were made with. A capacity result's
// spec is the search's, without a rate (the searches of several devices
// compare in one table); its run is the final trial's, open loop at the
// answer's rate, and reports as such.
func RunSpec(res *wire.Result) wire.RunSpec {
	spec := res.Spec
	if c := res.Capacity; c != nil && spec.Rate == 0 && c.CapacityRPS > 0 {
		spec.Rate = c.CapacityRPS
	}
	return spec
}

// LoadResult rebuilds the load generator's LoadResult of a run of a result
// with the given spec, for its reports: a device's report.WriteText,
// WriteAB or WriteWrk print the same from it as `edgebench run` did.
func LoadResult(r *wire.Run, spec wire.RunSpec) (*report.LoadResult, error) {
	t, err := report.ParseTarget(spec.URL)
	if err != nil {
		return nil, err
	}
	res := &report.LoadResult{
		Target: t, Method: spec.Method, Connections: spec.Connections, Threads: spec.Threads,
		KeepAlive: spec.KeepAlive, Rate: spec.Rate,
		Timeout: time.Duration(spec.TimeoutMS) * time.Millisecond, Warmup: time.Duration(spec.WarmupMS) * time.Millisecond,
		Start: r.StartedAt, Duration: time.Duration(r.DurationUS) * time.Microsecond,
		Completed: r.Completed, OK: r.OK, Errors: Errors(r.Errors),
		StatusCodes: statusMap(r.StatusCodes), Bytes: r.Bytes, BodyBytes: r.BodyBytes, Connects: r.Connects,
		DocLength: r.DocLength, Server: r.Server, Interrupted: r.Interrupted,
		LengthCheck: !spec.NoLengthCheck, WarmupRequests: r.WarmupRequests,
		Sent: r.Sent, RequestBody: spec.BodyBytes, KeepAliveResponses: r.KeepAliveResponses,
		Drained: report.Drained{StatusCodes: map[int]int64{}},
	}
	if res.Threads == 0 {
		res.Threads = 1
	}
	if d := r.Drained; d != nil {
		res.Drained = report.Drained{Requests: d.Requests, Completed: d.Completed, OK: d.OK, Errors: Errors(d.Errors),
			Cut: d.Cut, StatusCodes: statusMap(d.StatusCodes), Bytes: d.Bytes, BodyBytes: d.BodyBytes, Connects: d.Connects}
	}
	for _, h := range []struct {
		dst **report.Histogram
		b   []byte
		n   string
	}{{&res.Latency, r.Latency, "latency"}, {&res.Connect, r.Connect, "connect"}, {&res.Waiting, r.Waiting, "waiting"}, {&res.Processing, r.Processing, "processing"}} {
		if len(h.b) == 0 {
			*h.dst = report.NewLatencyHistogram()
			continue
		}
		d, err := report.DecodeHistogram(h.b)
		if err != nil {
			return nil, fmt.Errorf("%s histogram: %w", h.n, err)
		}
		*h.dst = d
	}
	for _, s := range r.Timeline {
		res.Timeline = append(res.Timeline, report.Second{T: int(s.T), Completed: s.Completed, Errors: s.Errors, P50: s.P50US, P99: s.P99US})
	}
	res.Protocol = spec.Protocol
	switch {
	case spec.Protocol != "":
	case spec.Mode == "ab":
		res.Protocol = "HTTP/1.0"
	default:
		res.Protocol = "HTTP/1.1"
	}
	if t := r.TLS; t != nil {
		res.TLS = &report.TLSInfo{Version: t.Version, Cipher: t.Cipher, Group: t.Group, ServerName: t.ServerName, ALPN: t.ALPN,
			KeyBits: t.KeyBits, Resume: t.Resume, Handshakes: t.Handshakes, Resumed: t.Resumed}
		res.Handshake = report.NewLatencyHistogram()
		if len(r.Handshake) > 0 {
			if res.Handshake, err = report.DecodeHistogram(r.Handshake); err != nil {
				return nil, fmt.Errorf("handshake histogram: %w", err)
			}
		}
	}
	if h := r.H2; h != nil || spec.Protocol != "" {
		res.H2 = &report.H2Info{Streams: spec.Streams}
		if h != nil {
			res.H2.MaxStreams, res.H2.GoAways, res.H2.Retried, res.H2.HeaderBytes = h.MaxStreams, h.GoAways, h.Retried, h.HeaderBytes
			for _, c := range h.Resets {
				if res.H2.Resets == nil {
					res.H2.Resets = map[string]int64{}
				}
				res.H2.Resets[c.Name] += c.N
			}
		}
	}
	return res, nil
}

// SystemReport rebuilds the probe's summary of a run (without its
// per-interval samples), for the System section of a text report.
func SystemReport(s *wire.System) *machine.Report {
	rep := &machine.Report{Interval: float64(s.IntervalMS) / 1000, Stride: s.Stride, Warnings: s.Warnings}
	su := &s.Summary
	sm := machine.Summary{Seconds: su.Seconds, Samples: su.Samples, Load1: backStat(su.Load1, 0.01),
		ContextSwitches: backStat(su.Ctxt, 1), Interrupts: backStat(su.Intr, 1)}
	if c := su.CPU; c != nil {
		sm.CPU = &machine.CPUSummary{User: back(c.User, 0.01), Nice: back(c.Nice, 0.01), System: back(c.System, 0.01),
			Idle: back(c.Idle, 0.01), IOWait: back(c.IOWait, 0.01), IRQ: back(c.IRQ, 0.01), SoftIRQ: back(c.SoftIRQ, 0.01), Steal: back(c.Steal, 0.01)}
	}
	for i, c := range su.CoreBusyBP {
		sm.PerCPUBusy = append(sm.PerCPUBusy, machine.CoreStat{ID: i, Stat: back(c, 0.01)})
	}
	if m := su.Mem; m != nil {
		sm.Mem = &machine.MemSummary{Total: uint64(m.TotalKB) * 1024, Used: back(m.Used, 1024), Free: back(m.Free, 1024),
			Available: backStat(m.Available, 1024), Buffers: backStat(m.Buffers, 1024), Cached: backStat(m.Cached, 1024),
			Dirty: backStat(m.Dirty, 1024), SwapUsed: backStat(m.SwapUsed, 1024)}
	}
	name := func(list []string, i int32) string {
		if i >= 0 && int(i) < len(list) {
			return list[i]
		}
		return "?"
	}
	for _, d := range su.Disks {
		part := int(d.I) < len(s.Partitions) && d.I >= 0 && s.Partitions[d.I]
		sm.Disks = append(sm.Disks, machine.DiskSummary{Name: name(s.Disks, d.I), Partition: part, ReadKBs: back(d.ReadKBs, 1),
			WriteKBs: back(d.WriteKBs, 1), ReadIOPS: back(d.ReadIOPS, 1), WriteIOPS: back(d.WriteIOPS, 1), Busy: back(d.BusyBP, 0.01)})
	}
	for _, n := range su.Nets {
		sm.Nets = append(sm.Nets, machine.NetSummary{Name: name(s.Nets, n.I), RxKBs: back(n.RxKBs, 1), TxKBs: back(n.TxKBs, 1),
			RxPps: back(n.RxPps, 1), TxPps: back(n.TxPps, 1), SpeedMbps: int(n.SpeedMbps), Duplex: n.Duplex,
			RxDrops: optCount(n.RxDrops), TxDrops: optCount(n.TxDrops), RxErrs: optCount(n.RxErrs), TxErrs: optCount(n.TxErrs)})
	}
	if t := su.TCP; t != nil {
		sm.TCP = &machine.TCPSummary{InSegs: back(t.InSegs, 1), OutSegs: back(t.OutSegs, 1), RetransSegs: back(t.RetransSegs, 1),
			Out: float64(t.Out), Retrans: float64(t.Retrans)}
	}
	if p := su.Path; p != nil {
		sm.Path = &machine.PathSummary{Target: p.Target, Idle: rtt(p.Idle), Loaded: rtt(p.Loaded), Lost: int(p.Lost)}
	}
	if p := su.PSI; p != nil {
		sm.PSI = &machine.PSISummary{CPUSome: backStat(p.CPUSome, 0.01), IOSome: backStat(p.IOSome, 0.01), IOFull: backStat(p.IOFull, 0.01),
			MemSome: backStat(p.MemSome, 0.01), MemFull: backStat(p.MemFull, 0.01)}
	}
	if su.TempMaxDC != nil {
		v := float64(*su.TempMaxDC) / 10
		sm.TempMaxC = &v
	}
	sm.FreqMinMHz, sm.FreqMaxMHz = optFloat(su.FreqMinMHz), optFloat(su.FreqMaxMHz)
	if su.Throttled != nil {
		f := machine.ThrottleFlagsOf(*su.Throttled)
		sm.Throttled = &f
	}
	for _, p := range su.Procs {
		ps := machine.ProcSummary{Name: name(s.Procs, p.I), PID: int(p.PID), Count: int(p.Count),
			CPU: backStat(p.CPUBP, 0.01), RSS: backStat(p.RSSKB, 1024), Role: p.Role}
		if p.Of != nil {
			ps.Of = name(s.Procs, *p.Of)
		}
		if p.ReadKB != nil {
			v := float64(*p.ReadKB)
			ps.ReadKB = &v
		}
		if p.WriteKB != nil {
			v := float64(*p.WriteKB)
			ps.WriteKB = &v
		}
		for _, id := range p.CPUs {
			ps.CPUs = append(ps.CPUs, int(id))
		}
		sm.Procs = append(sm.Procs, ps)
	}
	rep.Summary = sm
	return rep
}

func back(s wire.WindowStat, k float64) machine.Stat {
	return machine.Stat{Mean: float64(s.Mean) * k, Max: float64(s.Max) * k}
}

func backStat(s *wire.WindowStat, k float64) *machine.Stat {
	if s == nil {
		return nil
	}
	v := back(*s, k)
	return &v
}

// optCount is a count of the wire (packets dropped, in error) back as
// the probe's figure.
func optCount(v *int64) *float64 {
	if v == nil {
		return nil
	}
	f := float64(*v)
	return &f
}

// rtt is handshake times of the wire (µs) back in milliseconds.
func rtt(r *wire.RTTWindow) *machine.RTT {
	if r == nil {
		return nil
	}
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return &machine.RTT{N: int(r.N), MinMS: ms(r.MinUS), MedianMS: ms(r.MedianUS), MaxMS: ms(r.MaxUS)}
}

func optFloat(v *int32) *float64 {
	if v == nil {
		return nil
	}
	f := float64(*v)
	return &f
}
