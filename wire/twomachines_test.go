package wire_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/edgebench/edgebench/wire"
	"github.com/edgebench/edgebench/wire/wiretest"
)

// The messages of a two-machine run are checked at the decoder like the
// others: a device's addresses are addresses, a mark names a command, an
// edge and a run in range, a window event an edge, and the network's
// figures of a result are counts no consumer has to check again.
func TestDecodeChecksTwoMachines(t *testing.T) {
	if _, err := wire.DecodeResult(wiretest.Marshal(t, wiretest.ResultNet(t, 20))); err != nil {
		t.Fatalf("the result fixture does not decode: %v", err)
	}
	for _, c := range []struct {
		name string
		mut  func(r *wire.Result)
	}{
		{"duplex quarter", func(r *wire.Result) { r.Runs[0].System.Summary.Nets[0].Duplex = "quarter" }},
		{"negative drops", func(r *wire.Result) { *r.Runs[0].System.Summary.Nets[0].RxDrops = -1 }},
		{"negative errors", func(r *wire.Result) { *r.Runs[0].System.Summary.Nets[0].TxErrs = -1 }},
		{"negative sample drops", func(r *wire.Result) { r.Runs[0].System.Samples[3].Nets[0].TxDrops = -1 }},
		{"negative sample errors", func(r *wire.Result) { r.Runs[0].System.Samples[3].Nets[0].RxErrs = -1 }},
		{"negative sample retransmissions", func(r *wire.Result) { r.Runs[0].System.Samples[3].TCP.RetransSegs = -1 }},
		{"negative segments sent", func(r *wire.Result) { r.Runs[0].System.Summary.TCP.Out = -1 }},
		{"negative retransmissions", func(r *wire.Result) { r.Runs[0].System.Summary.TCP.Retrans = -1 }},
		{"negative mean of retransmissions", func(r *wire.Result) { r.Runs[0].System.Summary.TCP.RetransSegs.Mean = -1 }},
		{"negative handshakes lost", func(r *wire.Result) { r.Runs[0].System.Summary.Path.Lost = -1 }},
		{"no handshake", func(r *wire.Result) { r.Runs[0].System.Summary.Path.Idle.N = 0 }},
		{"negative rtt", func(r *wire.Result) { r.Runs[0].System.Summary.Path.Loaded.MinUS = -1 }},
		{"median under the minimum", func(r *wire.Result) { r.Runs[0].System.Summary.Path.Loaded.MedianUS = 1 }},
		{"maximum under the median", func(r *wire.Result) { r.Runs[0].System.Summary.Path.Idle.MaxUS = 1 }},
		{"window of run -1", func(r *wire.Result) { r.Runs[0].Window = &wire.WatchWindow{Run: -1} }},
		{"window of run past the cap", func(r *wire.Result) { r.Runs[0].Window = &wire.WatchWindow{Run: wire.MaxRun + 1} }},
		// A joined result's loader: ids that name topics and spool files,
		// its fingerprint's counts, its machine checked as the target's.
		{"loader of a bad device id", func(r *wire.Result) { r.Loader = joinedLoader(); r.Loader.Device = "../pi" }},
		{"loader of the fleet's _all", func(r *wire.Result) { r.Loader = joinedLoader(); r.Loader.Device = wire.AllDevices }},
		{"loader of no fleet", func(r *wire.Result) { r.Loader = joinedLoader(); r.Loader.Fleet = "" }},
		{"loader's result of a bad id", func(r *wire.Result) { r.Loader = joinedLoader(); r.Loader.ResultID = "a b" }},
		{"loader's watch of no id", func(r *wire.Result) { r.Loader = joinedLoader(); r.Loader.WatchID = "" }},
		{"loader of negative cores", func(r *wire.Result) { r.Loader = joinedLoader(); r.Loader.Fingerprint.Cores = -1 }},
		{"loader's machine with a disk index out of its table", func(r *wire.Result) {
			sys := *r.Runs[0].System
			sys.Summary.Disks = []wire.DiskWindow{{I: 7}}
			r.Runs[0].Loader = &sys
		}},
		{"loader's machine with negative drops", func(r *wire.Result) {
			sys := *r.Runs[0].System
			sys.Summary.Nets = []wire.NetWindow{{I: 0, RxDrops: new(int64)}}
			*sys.Summary.Nets[0].RxDrops = -3
			r.Runs[0].Loader = &sys
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := wiretest.ResultNet(t, 20)
			c.mut(r)
			if _, err := wire.DecodeResult(wiretest.Marshal(t, r)); !errors.Is(err, wire.ErrMalformed) {
				t.Errorf("error %v, want ErrMalformed", err)
			}
		})
	}
	r := wiretest.ResultNet(t, 20)
	r.Runs[0].Window = &wire.WatchWindow{Run: wire.MaxRun, Open: true}
	if _, err := wire.DecodeResult(wiretest.Marshal(t, r)); err != nil {
		t.Errorf("window of the last run: %v", err)
	}
	r.Loader, r.Runs[0].Loader = joinedLoader(), r.Runs[0].System
	if got, err := wire.DecodeResult(wiretest.Marshal(t, r)); err != nil || !reflect.DeepEqual(got.Loader, joinedLoader()) || got.Runs[0].Loader == nil {
		t.Errorf("a joined result: %v %+v", err, got)
	}

	for _, c := range []struct {
		name string
		cmd  func() *wire.Command
		want error
	}{
		{"mark without its spec", func() *wire.Command { c := wiretest.Mark(); c.Spec.Mark = nil; return c }, wire.ErrMalformed},
		{"mark of no command", func() *wire.Command { c := wiretest.Mark(); c.Spec.Mark.CommandID = ""; return c }, wire.ErrMalformed},
		{"mark of a bad id", func() *wire.Command { c := wiretest.Mark(); c.Spec.Mark.CommandID = "../x"; return c }, wire.ErrMalformed},
		{"mark edge middle", func() *wire.Command { c := wiretest.Mark(); c.Spec.Mark.Edge = "middle"; return c }, wire.ErrMalformed},
		{"mark edge empty", func() *wire.Command { c := wiretest.Mark(); c.Spec.Mark.Edge = ""; return c }, wire.ErrMalformed},
		{"mark of run -1", func() *wire.Command { c := wiretest.Mark(); c.Spec.Mark.Run = -1; return c }, wire.ErrMalformed},
		{"mark of run past the cap", func() *wire.Command { c := wiretest.Mark(); c.Spec.Mark.Run = wire.MaxRun + 1; return c }, wire.ErrMalformed},
		{"watch URL over the cap", func() *wire.Command {
			c := wiretest.Watch()
			c.Spec.Probe.URL = "http://x/" + strings.Repeat("a", wire.MaxURL)
			return c
		}, wire.ErrTooLarge},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := wire.DecodeCommand(wiretest.Marshal(t, c.cmd())); !errors.Is(err, c.want) {
				t.Errorf("error %v, want %v", err, c.want)
			}
		})
	}
	for _, c := range []*wire.Command{wiretest.Watch(), wiretest.Mark()} {
		got, err := wire.DecodeCommand(wiretest.Marshal(t, c))
		if err != nil {
			t.Errorf("%s: %v", c.Kind, err)
			continue
		}
		if c.Kind == wire.KindMark && (*got.Spec.Mark != wire.MarkSpec{CommandID: "01JB6Z3H00A1B2C3D4E5F6G7H8", Run: 1, Edge: "end"}) {
			t.Errorf("mark decoded as %+v", *got.Spec.Mark)
		}
	}

	st := wiretest.Status()
	st.Info.Addrs = []string{"192.168.2.13", "fd00::13"}
	if got, err := wire.DecodeStatus(wiretest.Marshal(t, st)); err != nil || len(got.Info.Addrs) != 2 || got.Info.Addrs[1] != "fd00::13" {
		t.Errorf("addresses: %v %+v", err, got)
	}
	for _, bad := range []string{"", "pi3.lan", "10.0.0.0/8", "fe80::1%eth0", "192.168.2.300"} {
		st.Info.Addrs = []string{"192.168.2.13", bad}
		if _, err := wire.DecodeStatus(wiretest.Marshal(t, st)); !errors.Is(err, wire.ErrMalformed) {
			t.Errorf("address %q: %v", bad, err)
		}
	}
	st.Info.Addrs = make([]string, 17)
	for i := range st.Info.Addrs {
		st.Info.Addrs[i] = "10.0.0.1"
	}
	if _, err := wire.DecodeStatus(wiretest.Marshal(t, st)); err == nil {
		t.Error("17 addresses decoded")
	}

	ev := wiretest.Event()
	ev.Progress, ev.Window = nil, &wire.WindowEdge{Edge: wire.MarkEnd, Run: 2}
	if got, err := wire.DecodeEvent(wiretest.Marshal(t, ev)); err != nil || *got.Window != (wire.WindowEdge{Edge: "end", Run: 2}) {
		t.Errorf("window event: %v %+v", err, got)
	}
	for _, bad := range []wire.WindowEdge{
		{Edge: "done"}, // the collector's, not the loader's
		{Edge: "<b>"},
		{Edge: ""},
		{Edge: wire.MarkStart, Run: -1},
		{Edge: wire.MarkStart, Run: wire.MaxRun + 1},
	} {
		ev := wiretest.Event()
		ev.Window = &bad
		if _, err := wire.DecodeEvent(wiretest.Marshal(t, ev)); !errors.Is(err, wire.ErrMalformed) {
			t.Errorf("window event %+v: %v", bad, err)
		}
	}
}

// joinedLoader is the loader of a joined result.
func joinedLoader() *wire.Loader {
	return &wire.Loader{Fleet: "lab", Device: "laptop", ResultID: "01JNHX7A2B3C4D5E6F7G8H9J0K", WatchID: "01JNHX6W8V2Q4R7T9Y3B5D6F8H",
		Fingerprint: wire.Fingerprint{Cores: 8}}
}
