package join

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/wire"
)

var at = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// latency is a wire histogram of n responses of us microseconds each.
func latency(n int64, us int64) []byte {
	h := report.NewLatencyHistogram()
	for range n {
		h.Record(us)
	}
	return h.Coarsen(3).AppendPacked(nil)
}

// sysOf is a System of cores cores busy busyPct % each, its rows procs
// (name, role, % of one core) and its one link of speed Mb/s, sending
// txKBs KiB/s.
func sysOf(cores int, busyPct float64, speed int32, txKBs int64, procs ...proc) *wire.System {
	bp := func(pct float64) int64 { return int64(pct * 100) }
	s := &wire.System{IntervalMS: 1000, Nets: []string{"eth0"}, Summary: wire.SysSummary{Seconds: 10, Samples: 10,
		CPU:  &wire.CPUWindow{User: wire.WindowStat{Mean: bp(busyPct)}, Idle: wire.WindowStat{Mean: bp(100 - busyPct)}},
		Nets: []wire.NetWindow{{I: 0, TxKBs: wire.WindowStat{Mean: txKBs}, TxPps: wire.WindowStat{Mean: txKBs / 1}, SpeedMbps: speed}}}}
	for range cores {
		s.Summary.CoreBusyBP = append(s.Summary.CoreBusyBP, wire.WindowStat{Mean: bp(busyPct)})
	}
	for i, p := range procs {
		s.Procs = append(s.Procs, p.name)
		s.Summary.Procs = append(s.Summary.Procs, wire.ProcWindow{I: int32(i), PID: int32(800 + i), Count: 1, Role: p.role,
			CPUBP: &wire.WindowStat{Mean: bp(p.cpu), Max: bp(p.cpu)}})
	}
	for k := range 10 {
		s.Samples = append(s.Samples, wire.SysSample{T: int32(1000 * (k + 1)), CPU: &wire.CPUShares{User: int32(bp(busyPct)), Idle: int32(bp(100 - busyPct))}})
	}
	return s
}

type proc struct {
	name, role string
	cpu        float64
}

// pair is a loader's result of n 10-second runs (repetitions) of 10
// connections at rps[i] req/s, and the target's watch whose runs cover
// the windows given, each with nginx at serverCPU[i] % of one core.
func pair(t *testing.T, rps []float64, windows []wire.WatchWindow, serverCPU []float64) (loader, target *wire.Result) {
	t.Helper()
	loader = &wire.Result{V: wire.SchemaVersion, ID: wire.NewID(), CommandID: wire.NewID(), Fleet: "lab", Device: "laptop", BootID: "boot-laptop",
		CreatedAt: at, Kind: wire.KindLoadTest, Outcome: wire.StateSucceeded,
		Labels:      map[string]string{"board": "thinkpad", "server": "nginx", "desk": "left"},
		Spec:        wire.RunSpec{URL: "http://10.0.0.2:8080/", Method: "GET", Connections: 10, DurationMS: 10_000, KeepAlive: true, Repeat: len(rps)},
		Fingerprint: wire.Fingerprint{Board: "ThinkPad X1", Cores: 8, Server: "nginx/1.22.1", Kernel: "6.1-laptop"},
		Warnings:    []string{"the round trip lost 1 handshake"}}
	for i, r := range rps {
		n := int64(r * 10)
		run := wire.Run{StartedAt: at.Add(time.Duration(i) * 12 * time.Second), DurationUS: 10_000_000, Completed: n, OK: n, DocLength: 612,
			Latency: latency(n, 10_000), System: sysOf(8, 10, 1000, 100, proc{"edgebench", wire.ProcGenerator, 40}),
			Verdict: &wire.Verdict{LimitedBy: "connections", Valid: true, Reasons: []string{fmt.Sprintf("the loader's own verdict of run %d", i)}}}
		run.System.Summary.Path = &wire.PathWindow{Target: "10.0.0.2:8080", Idle: &wire.RTTWindow{N: 5, MinUS: 80, MedianUS: 100, MaxUS: 200},
			Loaded: &wire.RTTWindow{N: 10, MinUS: 90, MedianUS: 110, MaxUS: 300}}
		for s := range 10 {
			run.Timeline = append(run.Timeline, wire.Second{T: int32(s), Completed: int64(r)})
		}
		loader.Runs = append(loader.Runs, run)
	}
	target = &wire.Result{V: wire.SchemaVersion, ID: wire.NewID(), CommandID: wire.NewID(), Fleet: "lab", Device: "pi-3", BootID: "boot-pi",
		CreatedAt: at.Add(time.Minute), Kind: wire.KindProbe, Outcome: wire.StateSucceeded,
		Labels:      map[string]string{"board": "pi3", "server": "apache"},
		Spec:        wire.RunSpec{URL: "http://10.0.0.2:8080/", DurationMS: 60_000, IntervalMS: 1000},
		Fingerprint: wire.Fingerprint{Board: "Raspberry Pi 3 Model B Rev 1.2", Cores: 4, Kernel: "6.1-pi", Throttled: true},
		Warnings:    []string{"no temperature"}}
	for i, w := range windows {
		target.Runs = append(target.Runs, wire.Run{StartedAt: at.Add(time.Duration(w.Run) * 12 * time.Second), DurationUS: 10_000_000, DocLength: -1,
			Window: &w, System: sysOf(4, serverCPU[i]/4, 100, 200, proc{"nginx", wire.ProcServer, serverCPU[i]})})
	}
	return loader, target
}

// serverCPU is the CPU of the joined run's server rows, as the wire has
// it, in % of one core.
func serverCPU(r *wire.Run) float64 {
	if r.System == nil || len(r.System.Summary.Procs) == 0 {
		return -1
	}
	return float64(r.System.Summary.Procs[0].CPUBP.Mean) / 100
}

// TestJoinPairsWindows: the loader's run i is joined with the watch's run
// of window i, closed, the first of them; a run whose window never
// closed keeps the loader's verdict and no target machine. The joined
// result is the target's, with the loader recorded.
func TestJoinPairsWindows(t *testing.T) {
	loader, target := pair(t, []float64{1000, 1100, 1200, 1300},
		[]wire.WatchWindow{{Run: 0}, {Run: 2}, {Run: 1, Open: true}, {Run: 0}, {Run: 3}},
		[]float64{30, 50, 60, 70, 90})
	j, err := Join(loader, target, []wire.Label{{K: "server", V: "nginx"}, {K: "round", V: "2"}})
	if err != nil {
		t.Fatal(err)
	}
	// Under the target: its id, device, boot, fingerprint, labels (with
	// the command's over them, never the loader's own).
	if j.ID != target.ID || j.Fleet != "lab" || j.Device != "pi-3" || j.BootID != "boot-pi" || j.CommandID != loader.CommandID {
		t.Errorf("joined %s %s/%s boot %s command %s", j.ID, j.Fleet, j.Device, j.BootID, j.CommandID)
	}
	if want := map[string]string{"board": "pi3", "server": "nginx", "round": "2"}; fmt.Sprint(j.Labels) != fmt.Sprint(want) {
		t.Errorf("labels %v, want %v", j.Labels, want)
	}
	fp := j.Fingerprint
	if fp.Board != "Raspberry Pi 3 Model B Rev 1.2" || fp.Cores != 4 || fp.Kernel != "6.1-pi" || fp.Server != "nginx/1.22.1" || !fp.Throttled {
		t.Errorf("fingerprint %+v: want the target's, with the Server header the loader read", fp)
	}
	l := j.Loader
	if l == nil || l.Fleet != "lab" || l.Device != "laptop" || l.ResultID != loader.ID || l.WatchID != target.CommandID || l.Fingerprint.Board != "ThinkPad X1" {
		t.Errorf("loader %+v", l)
	}
	if j.Kind != wire.KindLoadTest || j.Spec.URL != loader.Spec.URL || j.Spec.Connections != 10 {
		t.Errorf("kind %s spec %+v: want the load's", j.Kind, j.Spec)
	}
	// The windows: runs 0, 2 and 3 joined with their windows' first
	// closed run (nginx at 30, 50, 90 %); run 1's window never closed.
	for i, want := range []float64{30, -1, 50, 90} {
		r := &j.Runs[i]
		if r.Completed != loader.Runs[i].Completed || r.Loader != loader.Runs[i].System {
			t.Errorf("run %d: %d requests, loader's machine %p: want the loader's run %d", i, r.Completed, r.Loader, i)
		}
		if got := serverCPU(r); got != want {
			t.Errorf("run %d: the target's server at %v %% of a core, want %v", i, got, want)
		}
		if want < 0 {
			if r.Window != nil || r.Verdict.Reasons[0] != "the loader's own verdict of run 1" {
				t.Errorf("run %d, not measured on the target: window %+v, verdict %+v", i, r.Window, r.Verdict)
			}
			continue
		}
		if r.Window == nil || r.Window.Run != i || r.Window.Open {
			t.Errorf("run %d: window %+v", i, r.Window)
		}
		if strings.Contains(strings.Join(r.Verdict.Reasons, ";"), "own verdict") || !strings.Contains(strings.Join(r.Verdict.Reasons, ";"), "nginx") {
			t.Errorf("run %d: verdict %+v: want both machines judged, nginx named", i, r.Verdict)
		}
	}
	if want := []string{"the loader: the round trip lost 1 handshake", "the target: no temperature"}; fmt.Sprint(j.Warnings) != fmt.Sprint(want) {
		t.Errorf("warnings %q, want %q", j.Warnings, want)
	}
	// Both results are left as they were.
	if loader.Runs[0].System == nil || loader.Runs[0].Loader != nil || loader.Device != "laptop" || target.Runs[0].Loader != nil {
		t.Error("Join changed its inputs")
	}
	// It is a result the store takes and reads back.
	b, err := j.MarshalMsg(nil)
	if err != nil {
		t.Fatal(err)
	}
	back, err := wire.DecodeResultMax(b, MaxPayload)
	if err != nil || back.Loader == nil || back.Runs[0].Loader == nil {
		t.Errorf("the joined result back from its bytes: %v", err)
	}
}

// TestJoinVerdictJudgesBothMachines: the verdict of a joined run is
// JudgeTwo's over the target's machine and the loader's: nginx at its one
// core on the target is the server's limit, a link at its speed on the
// target the network's; the same load with the target idle is neither.
func TestJoinVerdictJudgesBothMachines(t *testing.T) {
	for _, c := range []struct {
		name      string
		cpu       float64 // nginx's, % of one core, on a target of 4 cores
		speed, tx int64   // the target's link, Mb/s, and what it sent, KiB/s
		by, says  string
	}{
		{"server at its core", 99, 1000, 200, "server", "nginx at 99 % of one core on the target"},
		{"the link at its speed", 30, 100, 12_000, "network", "the target's eth0 sent"},
		{"neither, the rate flat", 5, 1000, 200, "network", "neither machine was saturated: the link or something between them"},
		{"neither, the rate unsteady", 5, 1000, 200, "connections", "no resource saturated on either machine"},
	} {
		t.Run(c.name, func(t *testing.T) {
			loader, target := pair(t, []float64{1000}, []wire.WatchWindow{{Run: 0}}, []float64{c.cpu})
			if strings.HasSuffix(c.name, "unsteady") {
				for s := range loader.Runs[0].Timeline {
					loader.Runs[0].Timeline[s].Completed = int64(600 + 800*(s%2))
				}
			}
			n := &target.Runs[0].System.Summary.Nets[0]
			n.SpeedMbps, n.TxKBs.Mean, n.TxPps.Mean = int32(c.speed), c.tx, c.tx
			j, err := Join(loader, target, nil)
			if err != nil {
				t.Fatal(err)
			}
			v := j.Runs[0].Verdict
			if v.LimitedBy != c.by || !strings.Contains(strings.Join(v.Reasons, "; "), c.says) {
				t.Errorf("verdict %s %q, want %s saying %q", v.LimitedBy, v.Reasons, c.by, c.says)
			}
		})
	}
}

// TestJoinNotMeasured: a watch with no window of the load, or none
// closed, did not measure it; a result of the wrong kind is no part.
func TestJoinNotMeasured(t *testing.T) {
	for _, c := range []struct {
		name    string
		windows []wire.WatchWindow
		want    string
	}{
		{"no window", nil, "it recorded 0 runs: 0 of a window whose end was never marked, 0 of no window"},
		{"only open windows", []wire.WatchWindow{{Run: 0, Open: true}, {Run: 1, Open: true}}, "it recorded 2 runs: 2 of a window"},
		{"windows of other runs", []wire.WatchWindow{{Run: 5}}, "it recorded 1 run: 0 of a window"},
	} {
		t.Run(c.name, func(t *testing.T) {
			loader, target := pair(t, []float64{1000, 1000}, c.windows, []float64{30, 30})
			_, err := Join(loader, target, nil)
			if !errors.Is(err, ErrNotMeasured) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want ErrNotMeasured saying %q", err, c.want)
			}
		})
	}
	loader, target := pair(t, []float64{1000}, []wire.WatchWindow{{Run: 0}}, []float64{30})
	target.Runs[0].Window = nil // the whole watch, unmarked
	if _, err := Join(loader, target, nil); !errors.Is(err, ErrNotMeasured) {
		t.Errorf("a watch of no window: %v", err)
	}
	for name, mut := range map[string]func(l, t *wire.Result){
		"a probe as the load":  func(l, _ *wire.Result) { l.Kind = wire.KindProbe },
		"a load as the watch":  func(_, t *wire.Result) { t.Kind = wire.KindLoadTest },
		"a load that failed":   func(l, _ *wire.Result) { l.Outcome, l.Reason = wire.StateFailed, "no successful response" },
		"a load that was shed": func(l, _ *wire.Result) { l.Outcome = wire.StateCancelled },
	} {
		loader, target := pair(t, []float64{1000}, []wire.WatchWindow{{Run: 0}}, []float64{30})
		mut(loader, target)
		if j, err := Join(loader, target, nil); err == nil {
			t.Errorf("%s: joined %+v", name, j)
		}
	}
}

// TestJoinCapacity: a capacity search's run is its final trial's, whose
// window is its trial's number less one; every trial the watch covered
// gets the target's server CPU.
func TestJoinCapacity(t *testing.T) {
	loader, target := pair(t, []float64{400}, []wire.WatchWindow{{Run: 0}, {Run: 1}, {Run: 2}, {Run: 3}}, []float64{10, 20, 40, 35})
	loader.Kind = wire.KindCapacity
	loader.Capacity = &wire.Capacity{SLO: "p99<50ms", CapacityRPS: 400, LimitedBy: "slo", Confirmed: true, Trials: []wire.CapacityTrial{
		{Kind: "ramp", OfferedRPS: 100}, {Kind: "ramp", OfferedRPS: 200}, {Kind: "ramp", OfferedRPS: 800}, {Kind: "final", OfferedRPS: 400}}}
	j, err := Join(loader, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	if w := j.Runs[0].Window; w == nil || w.Run != 3 || serverCPU(&j.Runs[0]) != 35 {
		t.Errorf("the final trial's run: window %+v, server %v %%: want trial 4's window, 35 %%", w, serverCPU(&j.Runs[0]))
	}
	for k, want := range []int32{1000, 2000, 4000, 3500} {
		if got := j.Capacity.Trials[k].ServerCPUBP; got == nil || *got != want {
			t.Errorf("trial %d: server CPU %v, want %d bp", k+1, got, want)
		}
	}
	if loader.Capacity.Trials[0].ServerCPUBP != nil {
		t.Error("Join changed the loader's trials")
	}
	// A search whose final trial did not confirm has no run: its trials
	// alone were measured.
	loader.Runs, loader.Capacity.Confirmed = nil, false
	if j, err := Join(loader, target, nil); err != nil || len(j.Runs) != 0 || *j.Capacity.Trials[2].ServerCPUBP != 4000 {
		t.Errorf("a search without its final run: %v", err)
	}
}

// TestJoinFits: a joined result of two devices' largest results stays
// within MaxPayload, the loader's samples dropped first, then every
// other target sample; and it decodes.
func TestJoinFits(t *testing.T) {
	loader, target := pair(t, []float64{1000}, []wire.WatchWindow{{Run: 0}}, []float64{30})
	grow := func(s *wire.System) {
		for len(s.Samples) < 4000 {
			s.Samples = append(s.Samples, wire.SysSample{T: int32(len(s.Samples)), CoreBP: slices.Repeat([]int32{9999}, 48),
				Nets: []wire.NetRate{{I: 0, RxKBs: 100_000, TxKBs: 200_000}}})
		}
	}
	grow(loader.Runs[0].System)
	grow(target.Runs[0].System)
	j, err := Join(loader, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := j.MarshalMsg(nil)
	if len(b) > MaxPayload || len(j.Runs[0].Loader.Samples) != 0 || j.Runs[0].System.Stride < 2 || len(j.Runs[0].System.Samples) < 500 {
		t.Errorf("%d bytes, %d loader samples, target stride %d with %d samples", len(b), len(j.Runs[0].Loader.Samples),
			j.Runs[0].System.Stride, len(j.Runs[0].System.Samples))
	}
	if _, err := wire.DecodeResultMax(b, MaxPayload); err != nil {
		t.Error(err)
	}
	if len(loader.Runs[0].System.Samples) != 4000 || len(target.Runs[0].System.Samples) != 4000 {
		t.Error("Join thinned its inputs")
	}
}
