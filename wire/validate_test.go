package wire_test

import (
	"bytes"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/edgebench/edgebench/wire"
	"github.com/edgebench/edgebench/wire/wiretest"
)

// TestDecodeResultRefusesBadIndexes: a result whose index into a name
// table, count or figure no consumer could use is refused as malformed by
// the decoder itself, so nothing downstream indexes out of range (issue
// 11: one such result of a few hundred bytes took the collector down).
func TestDecodeResultRefusesBadIndexes(t *testing.T) {
	if _, err := wire.DecodeResult(wiretest.Marshal(t, wiretest.ResultN(t, 20))); err != nil {
		t.Fatalf("the fixture does not decode: %v", err)
	}
	for _, c := range []struct {
		name string
		mut  func(r *wire.Result)
	}{
		{"summary disk -1", func(r *wire.Result) { r.Runs[0].System.Summary.Disks[0].I = -1 }},
		{"summary disk past the table", func(r *wire.Result) { r.Runs[0].System.Summary.Disks[0].I = 3 }},
		{"summary interface -1", func(r *wire.Result) { r.Runs[0].System.Summary.Nets[0].I = -1 }},
		{"summary process past the table", func(r *wire.Result) { r.Runs[0].System.Summary.Procs[0].I = 2 }},
		{"summary process count", func(r *wire.Result) { r.Runs[0].System.Summary.Procs[0].Count = -1 }},
		{"summary link speed -1", func(r *wire.Result) { r.Runs[0].System.Summary.Nets[0].SpeedMbps = -1 }},
		{"summary process core -1", func(r *wire.Result) { r.Runs[0].System.Summary.Procs[0].CPUs = []int32{0, -1} }},
		{"summary process core 1024", func(r *wire.Result) { r.Runs[0].System.Summary.Procs[0].CPUs = []int32{1024} }},
		{"summary process of an unknown role", func(r *wire.Result) { r.Runs[0].System.Summary.Procs[0].Role = "servers" }},
		{"summary upstream's server past the table", func(r *wire.Result) {
			of := int32(2)
			r.Runs[0].System.Summary.Procs[1].Role, r.Runs[0].System.Summary.Procs[1].Of = wire.ProcUpstream, &of
		}},
		{"summary upstream's server -1", func(r *wire.Result) {
			of := int32(-1)
			r.Runs[0].System.Summary.Procs[1].Of = &of
		}},
		{"sample disk -1", func(r *wire.Result) { r.Runs[0].System.Samples[7].Disks[1].I = -1 }},
		{"sample disk past the table", func(r *wire.Result) { r.Runs[0].System.Samples[0].Disks[0].I = math.MaxInt32 }},
		{"sample interface", func(r *wire.Result) { r.Runs[0].System.Samples[2].Nets[0].I = 3 }},
		{"sample process", func(r *wire.Result) { r.Runs[0].System.Samples[29].Procs[1].I = -2 }},
		{"sample process count", func(r *wire.Result) { r.Runs[0].System.Samples[29].Procs[1].Count = -2 }},
		{"more temperatures than zones", func(r *wire.Result) { r.Runs[0].System.Samples[1].TempDC = []int32{1, 2} }},
		{"partition flags not one per disk", func(r *wire.Result) { r.Runs[0].System.Partitions = []bool{true} }},
		{"negative summary samples", func(r *wire.Result) { r.Runs[0].System.Summary.Samples = -1 }},
		{"NaN seconds", func(r *wire.Result) { r.Runs[0].System.Summary.Seconds = math.NaN() }},
		{"negative interval", func(r *wire.Result) { r.Runs[0].System.IntervalMS = -1000 }},
		{"negative completed", func(r *wire.Result) { r.Runs[0].Completed = -1 }},
		{"negative duration", func(r *wire.Result) { r.Runs[0].DurationUS = -1 }},
		{"negative timeouts", func(r *wire.Result) { r.Runs[0].Errors.Timeout = -5 }},
		{"negative event loops", func(r *wire.Result) { r.Runs[0].Loops = -1 }},
		{"negative status count", func(r *wire.Result) { r.Runs[0].StatusCodes[0].N = -1 }},
		{"doc length below -1", func(r *wire.Result) { r.Runs[0].DocLength = -2 }},
		{"timeline second -1", func(r *wire.Result) { r.Runs[0].Timeline[0].T = -1 }},
		{"timeline out of order", func(r *wire.Result) { r.Runs[0].Timeline[5].T = 2 }},
		{"timeline negative count", func(r *wire.Result) { r.Runs[0].Timeline[5].Completed = -9 }},
		{"negative connections", func(r *wire.Result) { r.Spec.Connections = -1 }},
		{"infinite rate", func(r *wire.Result) { r.Spec.Rate = math.Inf(1) }},
		{"negative cores", func(r *wire.Result) { r.Fingerprint.Cores = -4 }},
		{"repeat of -1 runs", func(r *wire.Result) { r.Repeat = &wire.Repeat{Runs: -1} }},
		{"NaN in the spread", func(r *wire.Result) { r.Repeat = &wire.Repeat{Runs: 3, RPS: wire.Spread{StdDev: math.NaN()}} }},
		{"NaN judged rsd", func(r *wire.Result) { r.Repeat = &wire.Repeat{Runs: 3, Judged: "p99", JudgedRSDPct: math.NaN()} }},
		{"infinite rsd bound", func(r *wire.Result) { r.Repeat = &wire.Repeat{Runs: 3, MaxRSDPct: math.Inf(1)} }},
		{"judged on an unknown figure", func(r *wire.Result) { r.Repeat = &wire.Repeat{Runs: 3, Judged: "<b>p50</b>"} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := wiretest.ResultN(t, 20)
			c.mut(r)
			_, err := wire.DecodeResult(wiretest.Marshal(t, r))
			if !errors.Is(err, wire.ErrMalformed) {
				t.Fatalf("decoded: %v", err)
			}
			t.Log(err)
		})
	}
	// What a probe sends without disks or with disks but no flags stays valid.
	r := wiretest.ResultN(t, 20)
	r.Runs[0].System.Partitions = nil
	if _, err := wire.DecodeResult(wiretest.Marshal(t, r)); err != nil {
		t.Errorf("no partition flags: %v", err)
	}
	// A link speed and a process's allowed cores decode.
	r = wiretest.ResultN(t, 20)
	r.Runs[0].System.Summary.Nets[0].SpeedMbps = 100
	r.Runs[0].System.Summary.Procs[0].CPUs = []int32{0, 1023}
	if got, err := wire.DecodeResult(wiretest.Marshal(t, r)); err != nil {
		t.Errorf("speed and cores: %v", err)
	} else if su := got.Runs[0].System.Summary; su.Nets[0].SpeedMbps != 100 || len(su.Procs[0].CPUs) != 2 || su.Procs[0].CPUs[1] != 1023 {
		t.Errorf("speed and cores decoded as %+v %+v", su.Nets[0], su.Procs[0])
	}
	// Each role decodes, and an upstream's server that is in the table.
	for _, role := range []string{"", wire.ProcServer, wire.ProcUpstream, wire.ProcGenerator} {
		r = wiretest.ResultN(t, 20)
		of := int32(0)
		r.Runs[0].System.Summary.Procs[1].Role, r.Runs[0].System.Summary.Procs[1].Of = role, &of
		if got, err := wire.DecodeResult(wiretest.Marshal(t, r)); err != nil {
			t.Errorf("role %q: %v", role, err)
		} else if p := got.Runs[0].System.Summary.Procs[1]; p.Role != role || p.Of == nil || *p.Of != 0 {
			t.Errorf("role %q decoded as %+v", role, p)
		}
	}
	if _, err := wire.DecodeResult(hostileResult(t, 0)); err != nil {
		t.Errorf("the hostile result with a good index: %v", err)
	}
	if b := hostileResult(t, -1); len(b) > 300 {
		t.Errorf("the hostile result is %d bytes", len(b))
	} else if _, err := wire.DecodeResult(b); !errors.Is(err, wire.ErrMalformed) {
		t.Errorf("the %d-byte hostile result: %v", len(b), err)
	}
}

// hostileResult is the smallest result that names disk i of a one-disk
// table in its summary: with i = -1, what crashed the collector.
func hostileResult(t testing.TB, i int32) []byte {
	r := &wire.Result{V: wire.SchemaVersion, ID: "01JB6Z3K9W2XQ8V5T4R7N1M0PA", Fleet: "lab", Device: "pi4-07", Outcome: wire.StateSucceeded,
		Runs: []wire.Run{{Completed: 1, System: &wire.System{Disks: []string{"sda"}, Partitions: []bool{true},
			Summary: wire.SysSummary{Disks: []wire.DiskWindow{{I: i}}}}}}}
	return wiretest.Marshal(t, r)
}

// TestDecodeCommandChecksTLSAndHTTP2: the decoder refuses a load test
// whose HTTP/2 or TLS options no device should act on: streams out of
// range, a TLS version that is none, a CA bundle over the cap, or one
// that holds a private key or anything but certificates.
func TestDecodeCommandChecksTLSAndHTTP2(t *testing.T) {
	if _, err := wire.DecodeCommand(wiretest.Marshal(t, wiretest.CommandH2(t))); err != nil {
		t.Fatalf("the fixture does not decode: %v", err)
	}
	ca := wiretest.CABundle(t)
	key := []byte("-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oIPmSgBEjHrKoAoGCCqGSM49\n-----END EC PRIVATE KEY-----\n")
	for _, c := range []struct {
		name string
		mut  func(s *wire.LoadTestSpec)
		want error
	}{
		{"negative streams", func(s *wire.LoadTestSpec) { s.Streams = -1 }, wire.ErrMalformed},
		{"streams over the cap", func(s *wire.LoadTestSpec) { s.Streams = wire.MaxStreams + 1 }, wire.ErrMalformed},
		{"streams without HTTP/2", func(s *wire.LoadTestSpec) { s.HTTP2 = false }, wire.ErrMalformed},
		{"TLS version 1.1", func(s *wire.LoadTestSpec) { s.TLS.Version = "1.1" }, wire.ErrMalformed},
		{"a private key after the CA", func(s *wire.LoadTestSpec) { s.TLS.CACerts = append(ca, key...) }, wire.ErrPrivateKey},
		{"a private key alone", func(s *wire.LoadTestSpec) { s.TLS.CACerts = key }, wire.ErrPrivateKey},
		{"a key in an unknown block", func(s *wire.LoadTestSpec) {
			s.TLS.CACerts = append(ca, []byte("junk -----BEGIN OPENSSH PRIVATE KEY----- junk")...)
		}, wire.ErrPrivateKey},
		{"a public key", func(s *wire.LoadTestSpec) {
			s.TLS.CACerts = []byte("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")
		}, wire.ErrMalformed},
		{"no PEM", func(s *wire.LoadTestSpec) { s.TLS.CACerts = []byte("not a certificate") }, wire.ErrMalformed},
		{"a certificate that does not parse", func(s *wire.LoadTestSpec) {
			s.TLS.CACerts = []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
		}, wire.ErrMalformed},
		{"a bundle over the cap", func(s *wire.LoadTestSpec) {
			s.TLS.CACerts = bytes.Repeat(ca, wire.MaxCABundle/len(ca)+1)
		}, wire.ErrMalformed},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := wiretest.CommandH2(t)
			c.mut(cmd.Spec.LoadTest)
			_, err := wire.DecodeCommand(wiretest.Marshal(t, cmd))
			if !errors.Is(err, c.want) {
				t.Errorf("error %v, want %v", err, c.want)
			}
		})
	}
	// Up to the cap decodes.
	cmd := wiretest.CommandH2(t)
	cmd.Spec.LoadTest.TLS.CACerts = bytes.Repeat(ca, wire.MaxCABundle/len(ca))
	cmd.Spec.LoadTest.Streams = wire.MaxStreams
	if _, err := wire.DecodeCommand(wiretest.Marshal(t, cmd)); err != nil {
		t.Errorf("a bundle of %d bytes, %d streams: %v", len(cmd.Spec.LoadTest.TLS.CACerts), wire.MaxStreams, err)
	}
}

// TestDecodeResultChecksTLSAndHTTP2: the protocol, TLS and HTTP/2 figures
// of a result are checked as the others are.
func TestDecodeResultChecksTLSAndHTTP2(t *testing.T) {
	if _, err := wire.DecodeResult(wiretest.Marshal(t, wiretest.ResultH2(t, 20))); err != nil {
		t.Fatalf("the fixture does not decode: %v", err)
	}
	for _, c := range []struct {
		name string
		mut  func(r *wire.Result)
	}{
		{"protocol h3", func(r *wire.Result) { r.Spec.Protocol = "h3" }},
		{"negative streams", func(r *wire.Result) { r.Spec.Streams = -1 }},
		{"streams over the cap", func(r *wire.Result) { r.Spec.Streams = wire.MaxStreams + 1 }},
		{"TLS version 1.0", func(r *wire.Result) { r.Spec.TLSVersion = "1.0" }},
		{"negative TLS errors", func(r *wire.Result) { r.Runs[0].Errors.TLS = -1 }},
		{"negative resets", func(r *wire.Result) { r.Runs[0].Errors.Reset = -1 }},
		{"negative handshakes", func(r *wire.Result) { r.Runs[0].TLS.Handshakes = -1 }},
		{"negative resumed", func(r *wire.Result) { r.Runs[0].TLS.Resumed = -1 }},
		{"negative goaways", func(r *wire.Result) { r.Runs[0].H2.GoAways = -1 }},
		{"negative reset count", func(r *wire.Result) { r.Runs[0].H2.Resets[0].N = -1 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := wiretest.ResultH2(t, 20)
			c.mut(r)
			if _, err := wire.DecodeResult(wiretest.Marshal(t, r)); !errors.Is(err, wire.ErrMalformed) {
				t.Errorf("error %v, want ErrMalformed", err)
			}
		})
	}
}

// A capacity result's figures are checked like the others: a NaN rate or
// a negative count is refused; a capacity command needs its spec.
func TestDecodeChecksCapacity(t *testing.T) {
	good := func() *wire.Result {
		r := wiretest.ResultN(t, 2)
		r.Kind = wire.KindCapacity
		r.Capacity = &wire.Capacity{SLO: "p99<50ms", CapacityRPS: 480, LimitedBy: "slo", Tolerance: 0.05,
			Trials: []wire.CapacityTrial{{Kind: "final", OfferedRPS: 480, AchievedRPS: 480, DurationMS: 5000, Requests: 2400, Pass: true}}}
		return r
	}
	if _, err := wire.DecodeResult(wiretest.Marshal(t, good())); err != nil {
		t.Fatal(err)
	}
	for name, spoil := range map[string]func(*wire.Capacity){
		"nan":      func(c *wire.Capacity) { c.CapacityRPS = math.NaN() },
		"negative": func(c *wire.Capacity) { c.CapacityRPS = -1 },
		"inf rate": func(c *wire.Capacity) { c.Trials[0].OfferedRPS = math.Inf(1) },
		"requests": func(c *wire.Capacity) { c.Trials[0].Requests = -5 },
		"p99":      func(c *wire.Capacity) { c.Trials[0].P99US = -1 },
	} {
		r := good()
		spoil(r.Capacity)
		if _, err := wire.DecodeResult(wiretest.Marshal(t, r)); !errors.Is(err, wire.ErrMalformed) {
			t.Errorf("%s: %v", name, err)
		}
	}
	cmd := &wire.Command{V: wire.SchemaVersion, ID: wire.NewID(), Kind: wire.KindCapacity, IssuedAt: time.Now(), ExpiresAt: time.Now().Add(time.Minute)}
	if _, err := wire.DecodeCommand(wiretest.Marshal(t, cmd)); !errors.Is(err, wire.ErrMalformed) {
		t.Errorf("capacity without a spec: %v", err)
	}
	cmd.Spec.Capacity = &wire.CapacitySpec{Load: wire.LoadTestSpec{URL: "http://127.0.0.1/"}, SLO: "p99<50ms", MaxRate: math.NaN()}
	if _, err := wire.DecodeCommand(wiretest.Marshal(t, cmd)); !errors.Is(err, wire.ErrMalformed) {
		t.Errorf("NaN max rate: %v", err)
	}
	cmd.Spec.Capacity.MaxRate = 1000
	if _, err := wire.DecodeCommand(wiretest.Marshal(t, cmd)); err != nil {
		t.Errorf("%v", err)
	}
}
