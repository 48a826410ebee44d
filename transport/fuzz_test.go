package transport

import (
	"testing"
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
	r := testResultN(f, 20)
	run := &r.Runs[0]
	run.Timeline = run.Timeline[:3]
	run.System.Samples = run.System.Samples[:3]
	run.Waiting, run.Processing = nil, nil
	f.Add(mustMarshal(f, r))
	run.System = nil
	f.Add(mustMarshal(f, r))
	seedHostile(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeResult(b)
		if err == nil {
			reencode(t, m, DecodeResult)
			useTables(m)
		}
	})
}

// useTables does what consumers of a decoded result do without checks of
// their own: index the name tables. It panics on an index the decoder let
// through. (The collector's FuzzResultViews rebuilds the reports.)
func useTables(r *Result) {
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
	f.Add(mustMarshal(f, testCommand()))
	c := testCommand()
	c.Kind, c.Spec = KindCancel, CommandSpec{Cancel: &CancelSpec{CommandID: "01JB6Z3H00A1B2C3D4E5F6G7H9"}}
	f.Add(mustMarshal(f, c))
	seedHostile(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeCommand(b)
		if err == nil {
			reencode(t, m, DecodeCommand)
			if _, err := m.SigningBytes("lab", AllDevices); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func FuzzDecodeStatus(f *testing.F) {
	f.Add(mustMarshal(f, testStatus()))
	will := &Status{V: SchemaVersion, State: StatusLost, BootID: "b", ConnSeq: 1 << 40}
	f.Add(mustMarshal(f, will))
	seedHostile(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := DecodeStatus(b); err == nil {
			reencode(t, m, DecodeStatus)
		}
	})
}

func FuzzDecodeEvent(f *testing.F) {
	f.Add(mustMarshal(f, testEvent()))
	seedHostile(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := DecodeEvent(b); err == nil {
			reencode(t, m, DecodeEvent)
		}
	})
}

func FuzzDecodeHeartbeat(f *testing.F) {
	f.Add(mustMarshal(f, testHeartbeat()))
	seedHostile(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := DecodeHeartbeat(b); err == nil {
			reencode(t, m, DecodeHeartbeat)
		}
	})
}

func FuzzDecodeAck(f *testing.F) {
	f.Add(mustMarshal(f, testAck()))
	seedHostile(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := DecodeAck(b); err == nil {
			reencode(t, m, DecodeAck)
		}
	})
}

func FuzzParseTopic(f *testing.F) {
	f.Add("edgebench/v1/lab/pi4-07/result")
	f.Add("edgebench/v1/lab/_all/cmd")
	f.Add("edgebench/v1/lab/_all/result")
	f.Add("edgebench/v1/Lab/x/ack")
	tp := Topics{Prefix: DefaultPrefix}
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

func FuzzCheckShape(f *testing.F) {
	f.Add(mustMarshal(f, testStatus()))
	seedHostile(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = checkShape(b)
	})
}
