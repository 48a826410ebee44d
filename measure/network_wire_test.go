package measure

import (
	"reflect"
	"testing"
	"time"

	"github.com/edgebench/edgebench/probe/machine"
	"github.com/edgebench/edgebench/wire"
)

// The network's figures land where they belong on the wire, each with a
// value no other has, in the wire's units (rates per second and counts
// whole, round-trip times in microseconds): the collector's side of
// two-machine runs reads them from there (see notBackYet).
func TestNetworkFiguresOnTheWireByValue(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	rep := &machine.Report{Interval: 1,
		Samples: []machine.Sample{{Time: start.Add(time.Second), Seconds: 1,
			Nets: []machine.Net{{Name: "eth0", RxBps: 1024, TxBps: 2048, RxPps: 3, TxPps: 4, RxDrops: 5, TxDrops: 6, RxErrs: 7, TxErrs: 8}},
			TCP:  &machine.TCP{InSegs: 9, OutSegs: 10, RetransSegs: 11}}},
		Summary: machine.Summary{Seconds: 1, Samples: 1,
			Nets: []machine.NetSummary{{Name: "eth0", SpeedMbps: 100, Duplex: "half",
				RxDrops: new(12.0), TxDrops: new(13.0), RxErrs: new(14.0), TxErrs: new(15.0)}},
			TCP: &machine.TCPSummary{InSegs: machine.Stat{Mean: 16, Max: 17}, OutSegs: machine.Stat{Mean: 18, Max: 19},
				RetransSegs: machine.Stat{Mean: 20, Max: 21}, Out: 22, Retrans: 23},
			Path: &machine.PathSummary{Target: "10.9.0.2:80", Lost: 24,
				Idle:   &machine.RTT{N: 25, MinMS: 0.026, MedianMS: 0.027, MaxMS: 0.028},
				Loaded: &machine.RTT{N: 29, MinMS: 30, MedianMS: 31, MaxMS: 32.5}}}}
	sys := FromSystem(rep, start)
	if got, want := sys.Samples[0].Nets[0], (wire.NetRate{I: 0, RxKBs: 1, TxKBs: 2, RxPps: 3, TxPps: 4, RxDrops: 5, TxDrops: 6, RxErrs: 7, TxErrs: 8}); got != want {
		t.Errorf("sample interface %+v, want %+v", got, want)
	}
	if got, want := *sys.Samples[0].TCP, (wire.TCPRate{InSegs: 9, OutSegs: 10, RetransSegs: 11}); got != want {
		t.Errorf("sample tcp %+v, want %+v", got, want)
	}
	n := sys.Summary.Nets[0]
	if n.SpeedMbps != 100 || n.Duplex != "half" || *n.RxDrops != 12 || *n.TxDrops != 13 || *n.RxErrs != 14 || *n.TxErrs != 15 {
		t.Errorf("summary interface %+v drops %d/%d errors %d/%d", n, *n.RxDrops, *n.TxDrops, *n.RxErrs, *n.TxErrs)
	}
	want := wire.TCPWindow{InSegs: wire.WindowStat{Mean: 16, Max: 17}, OutSegs: wire.WindowStat{Mean: 18, Max: 19},
		RetransSegs: wire.WindowStat{Mean: 20, Max: 21}, Out: 22, Retrans: 23}
	if *sys.Summary.TCP != want {
		t.Errorf("summary tcp %+v, want %+v", *sys.Summary.TCP, want)
	}
	wantPath := &wire.PathWindow{Target: "10.9.0.2:80", Lost: 24,
		Idle:   &wire.RTTWindow{N: 25, MinUS: 26, MedianUS: 27, MaxUS: 28},
		Loaded: &wire.RTTWindow{N: 29, MinUS: 30_000, MedianUS: 31_000, MaxUS: 32_500}}
	if !reflect.DeepEqual(sys.Summary.Path, wantPath) {
		t.Errorf("path %+v %+v %+v, want %+v %+v %+v", sys.Summary.Path, sys.Summary.Path.Idle, sys.Summary.Path.Loaded, wantPath, wantPath.Idle, wantPath.Loaded)
	}
	// Absent stays absent: no TCP, no path, drops not counted.
	bare := FromSystem(&machine.Report{Summary: machine.Summary{Nets: []machine.NetSummary{{Name: "lo"}}}}, start)
	if bare.Summary.TCP != nil || bare.Summary.Path != nil || bare.Summary.Nets[0].RxDrops != nil || bare.Summary.Nets[0].Duplex != "" {
		t.Errorf("absent figures came out as %+v", bare.Summary)
	}
}
