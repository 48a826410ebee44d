package wire

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"strings"

	"github.com/oklog/ulid/v2"
)

// check is the validation DecodeResult applies after the shape: every
// index into a name table is in it, every count and size is at least zero,
// every float is finite. Whatever a device sends, a decoded Result can be
// indexed, summed and encoded as JSON by its consumers without a check of
// their own.
func (r *Result) check() error {
	// The id of a result is a ULID (NewID): the store orders by it, a
	// device's spool lists by it.
	if _, err := ulid.ParseStrict(r.ID); err != nil {
		return fmt.Errorf("id %q is not a ULID (%v): %w", Clip(r.ID), err, ErrMalformed)
	}
	if !r.Outcome.Terminal() {
		return fmt.Errorf("outcome %q: want succeeded, failed, cancelled, timed_out or rejected: %w", Clip(string(r.Outcome)), ErrMalformed)
	}
	if err := r.Spec.check(); err != nil {
		return fmt.Errorf("spec: %w", err)
	}
	fp := &r.Fingerprint
	if err := nonNegative(field{"fingerprint cores", int64(fp.Cores)}, field{"fingerprint mem_kb", fp.MemKB},
		field{"fingerprint cpu_max_mhz", int64(fp.MaxFreqMHz)}); err != nil {
		return err
	}
	for i := range r.Runs {
		if err := r.Runs[i].check(); err != nil {
			return fmt.Errorf("run %d: %w", i+1, err)
		}
	}
	if p := r.Repeat; p != nil {
		if p.Runs < 0 {
			return fmt.Errorf("repeat: runs %d: %w", p.Runs, ErrMalformed)
		}
		for _, s := range []Spread{p.RPS, p.P50US, p.P99US} {
			if err := finite("repeat", s.Mean, s.StdDev, s.CILow, s.CIHigh, s.Min, s.Max); err != nil {
				return err
			}
		}
		if err := finite("repeat rsd", p.RSDPct, p.JudgedRSDPct, p.MaxRSDPct); err != nil {
			return err
		}
		if p.Judged != "" && p.Judged != "p99" { // the figure --repeat auto judged in open loop
			return fmt.Errorf("repeat judged on %q: %w", Clip(p.Judged), ErrMalformed)
		}
	}
	if c := r.Capacity; c != nil {
		if err := finite("capacity", c.CapacityRPS, c.UpperBoundRPS, c.Tolerance); err != nil {
			return err
		}
		if c.CapacityRPS < 0 || c.UpperBoundRPS < 0 {
			return fmt.Errorf("capacity %v, upper bound %v: %w", c.CapacityRPS, c.UpperBoundRPS, ErrMalformed)
		}
		for i, t := range c.Trials {
			if err := finite(fmt.Sprintf("capacity trial %d", i+1), t.OfferedRPS, t.AchievedRPS); err != nil {
				return err
			}
			if err := nonNegative(field{"trial rate", int64(min(t.OfferedRPS, t.AchievedRPS))}, field{"trial warmup_ms", t.WarmupMS},
				field{"trial duration_ms", t.DurationMS}, field{"trial requests", t.Requests}, field{"trial errors", t.Errors},
				field{"trial timeouts", t.Timeouts}, field{"trial p50", t.P50US}, field{"trial p90", t.P90US}, field{"trial p99", t.P99US},
				field{"trial p99.9", t.P999US}, field{"trial max", t.MaxUS}, field{"trial goodput", int64(t.GoodputBP)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// Bounds of a command's HTTP/2 and TLS options, checked by DecodeCommand
// (streams in results by DecodeResult too).
const (
	// MaxStreams is the most HTTP/2 streams per connection a load test
	// may ask for (loadgen.MaxStreams).
	MaxStreams = 1000
	// MaxCABundle is the size cap of a command's CA bundle in bytes (the
	// limit of TLSSpec.CACerts' msg tag): room for dozens of certificates.
	MaxCABundle = 64 << 10
	// MaxRun is the highest run a window's mark or event may name: a
	// load's repetitions or a capacity search's trials, from 0.
	MaxRun = 1000
	// MaxURL bounds the URL of a watch (ProbeSpec.URL).
	MaxURL = 4096
)

// checkAddr checks one of a device's addresses (DeviceInfo.Addrs): an IP
// address without a zone.
func checkAddr(s string) error {
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return fmt.Errorf("address %q: %w", Clip(s), ErrMalformed)
	}
	return nil
}

// check is the validation DecodeCommand applies to a command's spec.
func (c *Command) check() error {
	if lt := c.Spec.LoadTest; lt != nil {
		if err := lt.Check(); err != nil {
			return fmt.Errorf("loadtest: %w", err)
		}
	}
	if c.Kind == KindCapacity && c.Spec.Capacity == nil {
		return fmt.Errorf("capacity without its spec: %w", ErrMalformed)
	}
	if c.Kind == KindMark && c.Spec.Mark == nil {
		return fmt.Errorf("mark without its spec: %w", ErrMalformed)
	}
	if mk := c.Spec.Mark; mk != nil {
		if err := ValidMessageID(mk.CommandID); err != nil {
			return fmt.Errorf("mark: command %w", err)
		}
		switch mk.Edge {
		case MarkStart, MarkEnd, MarkDone:
		default:
			return fmt.Errorf("mark: edge %q: want start, end or done: %w", Clip(mk.Edge), ErrMalformed)
		}
		if mk.Run < 0 || mk.Run > MaxRun {
			return fmt.Errorf("mark: run %d not in 0..%d: %w", mk.Run, MaxRun, ErrMalformed)
		}
	}
	if pr := c.Spec.Probe; pr != nil && len(pr.URL) > MaxURL {
		return fmt.Errorf("probe: URL of %d bytes, cap %d: %w", len(pr.URL), MaxURL, ErrTooLarge)
	}
	if cp := c.Spec.Capacity; cp != nil {
		if err := cp.Load.Check(); err != nil {
			return fmt.Errorf("capacity: %w", err)
		}
		if err := finite("capacity", cp.StartRate, cp.MaxRate, cp.Tolerance); err != nil {
			return err
		}
		if err := nonNegative(field{"capacity start_rate", int64(cp.StartRate)}, field{"capacity max_rate", int64(cp.MaxRate)},
			field{"capacity trial_ms", cp.TrialMS}, field{"capacity final_ms", cp.FinalMS}, field{"capacity budget_ms", cp.BudgetMS}); err != nil {
			return err
		}
	}
	return nil
}

// Check bounds the HTTP/2 and TLS options of a load test, as
// DecodeCommand does on a device and the collector before it sends one:
// streams in 0..MaxStreams (0 is one), only with HTTP/2 when more than
// one; a TLS version of "1.2", "1.3" or none; a CA bundle of PEM
// certificates only, of at most MaxCABundle bytes (the generated decoder
// refuses a larger one before this).
func (s *LoadTestSpec) Check() error {
	if s.Streams < 0 || s.Streams > MaxStreams {
		return fmt.Errorf("streams %d not in 1..%d: %w", s.Streams, MaxStreams, ErrMalformed)
	}
	if s.Streams > 1 && !s.HTTP2 {
		return fmt.Errorf("streams %d without HTTP/2: %w", s.Streams, ErrMalformed)
	}
	t := s.TLS
	if t == nil {
		return nil
	}
	if err := checkTLSVersion(t.Version); err != nil {
		return err
	}
	if len(t.CACerts) > MaxCABundle {
		return fmt.Errorf("CA bundle of %d bytes, cap %d: %w", len(t.CACerts), MaxCABundle, ErrTooLarge)
	}
	if len(t.CACerts) > 0 {
		if err := CheckCACerts(t.CACerts); err != nil {
			return err
		}
	}
	return nil
}

func checkTLSVersion(v string) error {
	switch v {
	case "", "1.2", "1.3":
		return nil
	}
	return fmt.Errorf("TLS version %q: want 1.2 or 1.3: %w", Clip(v), ErrMalformed)
}

func (s *RunSpec) check() error {
	if err := nonNegative(field{"body_bytes", s.BodyBytes}, field{"connections", int64(s.Connections)}, field{"threads", int64(s.Threads)},
		field{"streams", int64(s.Streams)},
		field{"requests", s.Requests}, field{"duration_ms", s.DurationMS}, field{"timeout_ms", s.TimeoutMS},
		field{"warmup_ms", s.WarmupMS}, field{"repeat", int64(s.Repeat)}, field{"interval_ms", s.IntervalMS}); err != nil {
		return err
	}
	if err := finite("rate", s.Rate); err != nil {
		return err
	}
	if s.Rate < 0 {
		return fmt.Errorf("rate %g: %w", s.Rate, ErrMalformed)
	}
	switch s.Protocol {
	case "", "h2", "h2c":
	default:
		return fmt.Errorf("protocol %q: want h2, h2c or none: %w", Clip(s.Protocol), ErrMalformed)
	}
	if s.Streams > MaxStreams {
		return fmt.Errorf("streams %d over %d: %w", s.Streams, MaxStreams, ErrMalformed)
	}
	return checkTLSVersion(s.TLSVersion)
}

func (r *Run) check() error {
	e := r.Errors
	if err := nonNegative(field{"duration_us", r.DurationUS}, field{"completed", r.Completed}, field{"ok", r.OK},
		field{"connect errors", e.Connect}, field{"read errors", e.Read}, field{"write errors", e.Write},
		field{"timeouts", e.Timeout}, field{"status errors", e.Status}, field{"length errors", e.Length},
		field{"tls errors", e.TLS}, field{"reset errors", e.Reset}, field{"limit errors", e.Limit},
		field{"bytes", r.Bytes}, field{"body_bytes", r.BodyBytes}, field{"connects", r.Connects}, field{"loops", int64(r.Loops)}); err != nil {
		return err
	}
	if t := r.TLS; t != nil {
		if err := nonNegative(field{"tls handshakes", t.Handshakes}, field{"tls resumed", t.Resumed}, field{"tls key_bits", int64(t.KeyBits)}); err != nil {
			return err
		}
	}
	if h := r.H2; h != nil {
		if err := nonNegative(field{"h2 max_streams", h.MaxStreams}, field{"h2 goaways", h.GoAways}, field{"h2 retried", h.Retried},
			field{"h2 header_bytes", h.HeaderBytes}); err != nil {
			return err
		}
		for _, c := range h.Resets {
			if c.N < 0 {
				return fmt.Errorf("h2 resets %s: count %d: %w", c.Name, c.N, ErrMalformed)
			}
		}
	}
	if r.DocLength < -1 {
		return fmt.Errorf("doc_length %d: %w", r.DocLength, ErrMalformed)
	}
	for _, c := range r.StatusCodes {
		if c.N < 0 {
			return fmt.Errorf("status %d: count %d: %w", c.Code, c.N, ErrMalformed)
		}
	}
	last := int32(-1)
	for i, s := range r.Timeline {
		if s.T < 0 || s.T <= last {
			return fmt.Errorf("timeline second %d: t=%d, after t=%d: %w", i+1, s.T, last, ErrMalformed)
		}
		last = s.T
		if err := nonNegative(field{"timeline completed", s.Completed}, field{"timeline errors", s.Errors},
			field{"timeline p50", s.P50US}, field{"timeline p99", s.P99US}); err != nil {
			return fmt.Errorf("timeline second %d: %w", i+1, err)
		}
	}
	if r.System != nil {
		if err := r.System.check(); err != nil {
			return fmt.Errorf("system: %w", err)
		}
	}
	if w := r.Window; w != nil && (w.Run < 0 || w.Run > MaxRun) {
		return fmt.Errorf("window of run %d: %w", w.Run, ErrMalformed)
	}
	return nil
}

func (s *System) check() error {
	if err := nonNegative(field{"interval_ms", s.IntervalMS}, field{"stride", int64(s.Stride)}); err != nil {
		return err
	}
	if len(s.Partitions) != 0 && len(s.Partitions) != len(s.Disks) {
		return fmt.Errorf("%d partition flags for %d disks: %w", len(s.Partitions), len(s.Disks), ErrMalformed)
	}
	for i := range s.Samples {
		if err := s.checkSample(&s.Samples[i]); err != nil {
			return fmt.Errorf("sample %d: %w", i+1, err)
		}
	}
	su := &s.Summary
	if err := finite("summary seconds", su.Seconds); err != nil {
		return err
	}
	if su.Seconds < 0 || su.Samples < 0 {
		return fmt.Errorf("summary of %g seconds, %d samples: %w", su.Seconds, su.Samples, ErrMalformed)
	}
	for _, d := range su.Disks {
		if err := index("summary disk", d.I, s.Disks); err != nil {
			return err
		}
	}
	for _, n := range su.Nets {
		if err := index("summary interface", n.I, s.Nets); err != nil {
			return err
		}
		if n.SpeedMbps < 0 {
			return fmt.Errorf("summary interface %d: speed %d Mb/s: %w", n.I, n.SpeedMbps, ErrMalformed)
		}
		switch n.Duplex {
		case "", "full", "half":
		default:
			return fmt.Errorf("summary interface %d: duplex %q: %w", n.I, Clip(n.Duplex), ErrMalformed)
		}
		for _, c := range []*int64{n.RxDrops, n.TxDrops, n.RxErrs, n.TxErrs} {
			if c != nil && *c < 0 {
				return fmt.Errorf("summary interface %d: %d packets dropped or in error: %w", n.I, *c, ErrMalformed)
			}
		}
	}
	if t := su.TCP; t != nil {
		if err := nonNegative(field{"tcp in_segs", t.InSegs.Mean}, field{"tcp out_segs", t.OutSegs.Mean}, field{"tcp retrans_segs", t.RetransSegs.Mean},
			field{"tcp segments sent", t.Out}, field{"tcp segments retransmitted", t.Retrans}); err != nil {
			return err
		}
	}
	if p := su.Path; p != nil {
		if p.Lost < 0 {
			return fmt.Errorf("path: %d handshakes lost: %w", p.Lost, ErrMalformed)
		}
		for _, r := range []*RTTWindow{p.Idle, p.Loaded} {
			if r != nil && (r.N < 1 || r.MinUS < 0 || r.MinUS > r.MedianUS || r.MedianUS > r.MaxUS) {
				return fmt.Errorf("path: %d handshakes of %d/%d/%d us: %w", r.N, r.MinUS, r.MedianUS, r.MaxUS, ErrMalformed)
			}
		}
	}
	for _, p := range su.Procs {
		if err := index("summary process", p.I, s.Procs); err != nil {
			return err
		}
		if p.Count < 0 {
			return fmt.Errorf("summary process %d: count %d: %w", p.I, p.Count, ErrMalformed)
		}
		for _, id := range p.CPUs {
			if id < 0 || id >= 1024 {
				return fmt.Errorf("summary process %d: core %d: %w", p.I, id, ErrMalformed)
			}
		}
		switch p.Role {
		case "", ProcServer, ProcUpstream, ProcGenerator:
		default:
			return fmt.Errorf("summary process %d: role %q: %w", p.I, Clip(p.Role), ErrMalformed)
		}
		if p.Of != nil {
			if err := index("summary process's server", *p.Of, s.Procs); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *System) checkSample(w *SysSample) error {
	for _, d := range w.Disks {
		if err := index("disk", d.I, s.Disks); err != nil {
			return err
		}
	}
	for _, n := range w.Nets {
		if err := index("interface", n.I, s.Nets); err != nil {
			return err
		}
		if err := nonNegative(field{"interface drops", min(n.RxDrops, n.TxDrops)}, field{"interface errors", min(n.RxErrs, n.TxErrs)}); err != nil {
			return err
		}
	}
	if t := w.TCP; t != nil {
		if err := nonNegative(field{"tcp in_segs", t.InSegs}, field{"tcp out_segs", t.OutSegs}, field{"tcp retrans_segs", t.RetransSegs}); err != nil {
			return err
		}
	}
	for _, p := range w.Procs {
		if err := index("process", p.I, s.Procs); err != nil {
			return err
		}
		if p.Count < 0 {
			return fmt.Errorf("process %d: count %d: %w", p.I, p.Count, ErrMalformed)
		}
	}
	if len(w.TempDC) > len(s.Zones) {
		return fmt.Errorf("%d temperatures for %d thermal zones: %w", len(w.TempDC), len(s.Zones), ErrMalformed)
	}
	return nil
}

// index checks that i indexes table.
func index(what string, i int32, table []string) error {
	if i < 0 || int(i) >= len(table) {
		return fmt.Errorf("%s index %d not in 0..%d: %w", what, i, len(table)-1, ErrMalformed)
	}
	return nil
}

// field is a named count or size.
type field struct {
	name string
	v    int64
}

// nonNegative fails on the first field below zero.
func nonNegative(fs ...field) error {
	for _, f := range fs {
		if f.v < 0 {
			return fmt.Errorf("%s %d: %w", f.name, f.v, ErrMalformed)
		}
	}
	return nil
}

func finite(what string, vs ...float64) error {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s %g: %w", what, v, ErrMalformed)
		}
	}
	return nil
}

// ErrPrivateKey is a CA bundle that holds a private key.
var ErrPrivateKey = errors.New("a private key: a command carries certificates only")

// CheckCACerts checks the CA bundle of a command's TLSSpec: PEM
// certificates that parse, and nothing else. A private key, whatever its
// PEM type, is ErrPrivateKey: keys never travel in a command.
func CheckCACerts(b []byte) error {
	rest := b
	n := 0
	for {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			break
		}
		switch {
		case strings.Contains(blk.Type, "PRIVATE KEY"):
			return fmt.Errorf("CA bundle: %s block: %w", blk.Type, ErrPrivateKey)
		case blk.Type != "CERTIFICATE":
			return fmt.Errorf("CA bundle: a %s block, want CERTIFICATE only: %w", Clip(blk.Type), ErrMalformed)
		}
		if _, err := x509.ParseCertificate(blk.Bytes); err != nil {
			return fmt.Errorf("CA bundle: certificate %d: %w: %w", n+1, ErrMalformed, err)
		}
		n++
	}
	if strings.Contains(string(rest), "PRIVATE KEY") {
		return fmt.Errorf("CA bundle: %w", ErrPrivateKey)
	}
	if n == 0 {
		return fmt.Errorf("CA bundle: no PEM certificate: %w", ErrMalformed)
	}
	return nil
}
