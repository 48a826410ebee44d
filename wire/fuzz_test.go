package wire_test

import (
	"testing"

	"github.com/edgebench/edgebench/wire"
	"github.com/edgebench/edgebench/wire/wiretest"
)

// The fuzzers feed arbitrary bytes to every decoder: none may panic, and
// whatever decodes must encode and decode again to the same bytes' worth.
// Seeds are real encodings (f.Add) plus the files in testdata/fuzz (for
// results: indexes out of their tables, as hostile devices sent them).

func seedHostile(f *testing.F) {
	f.Add([]byte{0x81, 0xa2, 'r', 's', 0xdd, 0xff, 0xff, 0xff})
	f.Add([]byte{0xdf, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0xc6, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{})
}

func reencode[T interface {
	MarshalMsg([]byte) ([]byte, error)
}](t *testing.T, m T, decode func([]byte) (T, error)) {
	b, err := m.MarshalMsg(nil)
	if err != nil {
		t.Fatalf("re-encode: %v", err)
	}
	if _, err := decode(b); err != nil {
		t.Fatalf("decode of re-encoding: %v", err)
	}
}

func FuzzDecodeResult(f *testing.F) {
	// Seeds stay small (a few samples, short histograms): the coverage-
	// guided mutator crawls on inputs of many kilobytes.
	r := wiretest.ResultN(f, 20)
	run := &r.Runs[0]
	run.Timeline = run.Timeline[:3]
	run.System.Samples = run.System.Samples[:3]
	run.Waiting, run.Processing = nil, nil
	f.Add(wiretest.Marshal(f, r))
	run.System = nil
	f.Add(wiretest.Marshal(f, r))
	h2 := wiretest.ResultH2(f, 20)
	h2.Runs[0].Timeline, h2.Runs[0].System, h2.Runs[0].Waiting, h2.Runs[0].Processing = nil, nil, nil, nil
	f.Add(wiretest.Marshal(f, h2))
	// Two machines: the network's figures, and a watch's window.
	nt := wiretest.ResultNet(f, 20)
	nt.Runs[0].Timeline, nt.Runs[0].Waiting, nt.Runs[0].Processing = nil, nil, nil
	nt.Runs[0].System.Samples = nt.Runs[0].System.Samples[:2]
	nt.Runs[0].Window = &wire.WatchWindow{Run: 3, Open: true}
	f.Add(wiretest.Marshal(f, nt))
	seedHostile(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := wire.DecodeResult(b)
		if err == nil {
			reencode(t, m, wire.DecodeResult)
			useTables(m)
		}
	})
}

// useTables does what consumers of a decoded result do without checks of
// their own: index the name tables. It panics on an index the decoder let
// through. (The collector's FuzzResultViews rebuilds the reports.)
func useTables(r *wire.Result) {
	for i := range r.Runs {
		run := &r.Runs[i]
		sy := run.System
		if sy == nil {
			continue
		}
		for _, s := range sy.Samples {
			for _, d := range s.Disks {
				_ = sy.Disks[d.I]
				_ = len(sy.Partitions) > 0 && sy.Partitions[d.I]
			}
			for _, n := range s.Nets {
				_ = sy.Nets[n.I]
			}
			for _, p := range s.Procs {
				_ = sy.Procs[p.I]
			}
			for z := range s.TempDC {
				_ = sy.Zones[z]
			}
		}
		for _, d := range sy.Summary.Disks {
			_ = sy.Disks[d.I]
			_ = len(sy.Partitions) > 0 && sy.Partitions[d.I]
		}
		for _, n := range sy.Summary.Nets {
			_ = sy.Nets[n.I]
		}
		for _, p := range sy.Summary.Procs {
			_ = sy.Procs[p.I]
		}
	}
}

func FuzzDecodeCommand(f *testing.F) {
	f.Add(wiretest.Marshal(f, wiretest.Command()))
	c := wiretest.Command()
	c.Kind, c.Spec = wire.KindCancel, wire.CommandSpec{Cancel: &wire.CancelSpec{CommandID: "01JB6Z3H00A1B2C3D4E5F6G7H9"}}
	f.Add(wiretest.Marshal(f, c))
	// HTTPS and HTTP/2: the TLS options and a CA bundle, and one that
	// smuggles a key behind its certificate.
	h2 := wiretest.CommandH2(f)
	f.Add(wiretest.Marshal(f, h2))
	h2.Spec.LoadTest.TLS.CACerts = append(h2.Spec.LoadTest.TLS.CACerts, "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"...)
	f.Add(wiretest.Marshal(f, h2))
	f.Add(wiretest.Marshal(f, wiretest.Watch()))
	f.Add(wiretest.Marshal(f, wiretest.Mark()))
	seedHostile(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := wire.DecodeCommand(b)
		if err == nil {
			reencode(t, m, wire.DecodeCommand)
			if lt := m.Spec.LoadTest; lt != nil && lt.TLS != nil && len(lt.TLS.CACerts) > 0 && wire.CheckCACerts(lt.TLS.CACerts) != nil {
				t.Fatal("a CA bundle CheckCACerts refuses decoded")
			}
			if _, err := m.SigningBytes("lab", wire.AllDevices); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func FuzzDecodeStatus(f *testing.F) {
	f.Add(wiretest.Marshal(f, wiretest.Status()))
	will := &wire.Status{V: wire.SchemaVersion, State: wire.StatusLost, BootID: "b", ConnSeq: 1 << 40}
	f.Add(wiretest.Marshal(f, will))
	addrs := wiretest.Status()
	addrs.Info.Addrs = []string{"192.168.2.13", "fd00::13"}
	f.Add(wiretest.Marshal(f, addrs))
	seedHostile(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := wire.DecodeStatus(b); err == nil {
			reencode(t, m, wire.DecodeStatus)
		}
	})
}

func FuzzDecodeEvent(f *testing.F) {
	f.Add(wiretest.Marshal(f, wiretest.Event()))
	win := wiretest.Event()
	win.Progress, win.Window = nil, &wire.WindowEdge{Edge: wire.MarkStart, Run: 2}
	f.Add(wiretest.Marshal(f, win))
	seedHostile(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := wire.DecodeEvent(b); err == nil {
			reencode(t, m, wire.DecodeEvent)
		}
	})
}

func FuzzDecodeHeartbeat(f *testing.F) {
	f.Add(wiretest.Marshal(f, wiretest.Heartbeat()))
	seedHostile(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := wire.DecodeHeartbeat(b); err == nil {
			reencode(t, m, wire.DecodeHeartbeat)
		}
	})
}

func FuzzDecodeAck(f *testing.F) {
	f.Add(wiretest.Marshal(f, wiretest.Ack()))
	seedHostile(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := wire.DecodeAck(b); err == nil {
			reencode(t, m, wire.DecodeAck)
		}
	})
}

func FuzzParseTopic(f *testing.F) {
	f.Add("edgebench/v1/lab/pi4-07/result")
	f.Add("edgebench/v1/lab/_all/cmd")
	f.Add("edgebench/v1/lab/_all/result")
	f.Add("edgebench/v1/Lab/x/ack")
	tp := wire.Topics{Prefix: wire.DefaultPrefix}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := tp.Parse(s)
		if err != nil {
			return
		}
		back, err := tp.Topic(a.Fleet, a.Device, a.Kind)
		if err != nil || back != s {
			t.Fatalf("%q parsed to %+v, rebuilt %q, %v", s, a, back, err)
		}
	})
}

// FuzzPeekID: hostile bytes never panic PeekID, and what it returns is a
// valid id or "".
func FuzzPeekID(f *testing.F) {
	f.Add(wiretest.Marshal(f, wiretest.Command()))
	f.Add(wiretest.Marshal(f, wiretest.ResultN(f, 20)))
	seedHostile(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		if id := wire.PeekID(b); id != "" && wire.ValidMessageID(id) != nil {
			t.Fatalf("PeekID returned %q", id)
		}
	})
}

func FuzzCheckShape(f *testing.F) {
	f.Add(wiretest.Marshal(f, wiretest.Status()))
	seedHostile(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = wire.CheckShape(b)
	})
}
