package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/edgebench/edgebench/probe/machine"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixtureReport records the t0 -> t1 step of a fixture tree, dt apart on a
// fake clock, with an interval of dt whose ticks never come: only the edges
// sample.
func fixtureReport(t *testing.T, tree string, dt time.Duration, watches ...Watch) *machine.Report {
	t.Helper()
	t0 := time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)
	now := t0
	p := New("testdata/" + tree + "/t0")
	defer p.Close()
	p.now = func() time.Time { return now }
	p.pageSize = 4096
	r := p.record(context.Background(), dt, watches, nil, func() {})
	p.setRoot("testdata/" + tree + "/t1")
	now = t0.Add(dt)
	return r.Stop()
}

func TestRecorderFixtureSummary(t *testing.T) {
	rep := fixtureReport(t, "pi4", 2*time.Second, Watch{Name: "nginx"})
	s := rep.Summary
	if len(rep.Samples) != 2 || s.Samples != 1 || s.Seconds != 2 {
		t.Fatalf("%d samples kept, %d summarised over %v s", len(rep.Samples), s.Samples, s.Seconds)
	}
	if s.CPU == nil || s.CPU.User != (machine.Stat{Mean: 25, Max: 25}) || s.CPU.Idle != (machine.Stat{Mean: 50, Max: 50}) {
		t.Errorf("cpu = %+v", s.CPU)
	}
	if len(s.Disks) != 3 || s.Disks[0].Name != "mmcblk0" || s.Disks[0].ReadKBs != (machine.Stat{Mean: 512, Max: 512}) || s.Disks[0].WriteKBs.Mean != 1024 {
		t.Errorf("disks = %+v", s.Disks)
	}
	if s.TempMaxC == nil || *s.TempMaxC != 61.855 {
		t.Errorf("temp max = %v", s.TempMaxC)
	}
	// The window starts at 1500 MHz and ends at 1000: a drop.
	if s.FreqMinMHz == nil || *s.FreqMinMHz != 1000 || *s.FreqMaxMHz != 1500 {
		t.Errorf("freq = %v..%v", s.FreqMinMHz, s.FreqMaxMHz)
	}
	if s.Throttled == nil || *s.Throttled != (machine.ThrottleFlags{UnderVoltage: true, Throttled: true}) {
		t.Errorf("throttled = %+v", s.Throttled)
	}
	if s.PSI != nil {
		t.Errorf("psi = %+v", s.PSI)
	}
	if len(s.Procs) != 1 || s.Procs[0].CPU == nil || s.Procs[0].CPU.Mean != 75 || s.Procs[0].Count != 3 ||
		s.Procs[0].WriteKB == nil || *s.Procs[0].WriteKB != 4 {
		t.Errorf("procs = %+v", s.Procs)
	}
	w := strings.Join(rep.Warnings, "\n")
	if !strings.Contains(w, "under-voltage, throttled") || !strings.Contains(w, "dropped to 1000 MHz") {
		t.Errorf("warnings = %q", rep.Warnings)
	}

	var buf bytes.Buffer
	if err := rep.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"mmcblk0", "512.0/512.0", "61.9 C max", "1000-1500 MHz", "throttling under-voltage, throttled", "pressure -", "nginx", "75.0/75.0"} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "mmcblk0p2") {
		t.Errorf("text report lists a partition:\n%s", out)
	}
	b, err := json.Marshal(rep)
	if err != nil || !strings.Contains(string(b), `"freq_min_mhz":1000`) {
		t.Errorf("json: %v %s", err, b)
	}
}

func TestRecorderFixtureAbsent(t *testing.T) {
	rep := fixtureReport(t, "amd64", time.Second)
	s := rep.Summary
	if s.TempMaxC != nil || s.Throttled != nil || len(rep.Warnings) != 0 {
		t.Errorf("amd64 has temp %v, throttling %v, warnings %q", s.TempMaxC, s.Throttled, rep.Warnings)
	}
	if s.PSI == nil || s.PSI.IOFull == nil || s.PSI.IOFull.Mean != 2 {
		t.Errorf("psi = %+v", s.PSI)
	}
	var buf bytes.Buffer
	rep.WriteText(&buf)
	if out := buf.String(); !strings.Contains(out, "temperature -") || !strings.Contains(out, "throttling -") || !strings.Contains(out, "nvme0n1") {
		t.Errorf("text:\n%s", out)
	}
	b, _ := json.Marshal(rep)
	for _, key := range []string{"temp_max_c", "throttled", "temps"} {
		if strings.Contains(string(b), `"`+key+`"`) {
			t.Errorf("json has absent %s", key)
		}
	}
}

// A since-boot bit that appears during the window means the condition came
// and went between two samples: it counts as seen.
func TestAggregatorSinceBoot(t *testing.T) {
	t0 := time.Unix(0, 0)
	start := decodeThrottled(0x10000) // under-voltage before the run
	g := newAggregator(&machine.Sample{Time: t0, Throttle: &start})
	mid := decodeThrottled(0x30000) // capping happened since
	g.add(&machine.Sample{Time: t0.Add(time.Second), Seconds: 1, Throttle: &mid})
	s := g.summary()
	if *s.Throttled != (machine.ThrottleFlags{FreqCapped: true}) {
		t.Errorf("throttled = %+v, want frequency capped only", s.Throttled)
	}
	// Time-weighted means: 10 % for 1 s then 40 % for 3 s.
	g = newAggregator(&machine.Sample{Time: t0})
	g.add(&machine.Sample{Time: t0.Add(time.Second), Seconds: 1, CPU: &machine.CPU{User: 10, Idle: 90}})
	g.add(&machine.Sample{Time: t0.Add(4 * time.Second), Seconds: 3, CPU: &machine.CPU{User: 40, Idle: 60}})
	if u := g.summary().CPU.User; u != (machine.Stat{Mean: 32.5, Max: 40}) {
		t.Errorf("user = %+v, want mean 32.5 max 40", u)
	}
}

func TestRecorderLive(t *testing.T) {
	if testing.Short() {
		t.Skip("live process figures: not in -short (the 32-bit pass runs under qemu-user, whose /proc is the emulator's)")
	}
	p := New("/")
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := p.Record(ctx, 10*time.Millisecond, []Watch{ParseWatch("1"), {PID: selfPID()}})
	time.Sleep(35 * time.Millisecond)
	r.MarkStart()
	time.Sleep(50 * time.Millisecond)
	r.MarkEnd()
	time.Sleep(20 * time.Millisecond)
	rep := r.Stop()
	if again := r.Stop(); again != rep {
		t.Error("second Stop returned another report")
	}
	r.MarkStart() // after Stop: no effect, no panic
	if len(rep.Samples) < 5 {
		t.Errorf("%d samples", len(rep.Samples))
	}
	s := rep.Summary
	if s.Samples < 2 || s.Seconds < 0.04 || s.Seconds > 1 || s.Mem == nil || s.CPU == nil {
		t.Errorf("summary: %d samples over %v s, mem %v, cpu %v", s.Samples, s.Seconds, s.Mem, s.CPU)
	}
	if !s.Start.Before(s.End) || s.End.After(rep.Samples[len(rep.Samples)-1].Time) {
		t.Errorf("window %v..%v", s.Start, s.End)
	}
	if len(s.Procs) != 2 || s.Procs[1].Count != 1 || s.Procs[1].RSS == nil || s.Procs[1].RSS.Max <= 0 {
		t.Errorf("procs = %+v", s.Procs)
	}
}

func TestRecorderCancelledContext(t *testing.T) {
	p := New("/")
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	r := p.Record(ctx, time.Millisecond, nil)
	cancel()
	time.Sleep(5 * time.Millisecond)
	rep := r.Stop()
	if rep == nil || len(rep.Samples) < 2 {
		t.Fatalf("report %+v", rep)
	}
}

// A long run keeps a bounded number of samples; the summary still covers all.
func TestRecorderBounded(t *testing.T) {
	p := New("/")
	defer p.Close()
	now := time.Now()
	p.now = func() time.Time { return now }
	r := p.record(context.Background(), time.Second, nil, nil, func() {})
	r.mu.Lock()
	r.max = 16
	r.mu.Unlock()
	const n = 200
	for range n {
		now = now.Add(time.Second)
		r.tick()
	}
	now = now.Add(time.Second)
	rep := r.Stop()
	if len(rep.Samples) > 16+1 || rep.Stride < 2 {
		t.Errorf("%d samples kept, stride %d", len(rep.Samples), rep.Stride)
	}
	if rep.Summary.Samples != n+1 || rep.Summary.Seconds != n+1 {
		t.Errorf("summary over %d samples and %v s, want %d", rep.Summary.Samples, rep.Summary.Seconds, n+1)
	}
}

// TestWatchOfNoProcessWarns: --watch nosuchprocess names no process in
// the window: the report says so instead of a silent row of zeros.
func TestWatchOfNoProcessWarns(t *testing.T) {
	rep := fixtureReport(t, "pi4", 2*time.Second, Watch{Name: "nosuchprocess"}, Watch{Name: "nginx"})
	var found bool
	for _, w := range rep.Warnings {
		if strings.Contains(w, `"nosuchprocess"`) && strings.Contains(w, "none of that name") {
			found = true
		}
		if strings.Contains(w, "nginx") {
			t.Errorf("a warning about nginx, which ran: %q", w)
		}
	}
	if !found {
		t.Errorf("no warning about nosuchprocess: %q", rep.Warnings)
	}
}

// EndWindow closes one window and hands its report over while the
// recording goes on: each window's summary and samples are its own, in
// order, and after Stop there is none.
func TestRecorderWindows(t *testing.T) {
	p := New("/")
	defer p.Close()
	rec := p.Record(context.Background(), 50*time.Millisecond, nil)
	time.Sleep(120 * time.Millisecond) // before the first window: in neither
	var reps []*machine.Report
	for range 2 {
		rec.MarkStart()
		time.Sleep(260 * time.Millisecond)
		reps = append(reps, rec.EndWindow())
		time.Sleep(120 * time.Millisecond)
	}
	rec.Stop()
	if rec.EndWindow() != nil {
		t.Error("a window after Stop")
	}
	for i, r := range reps {
		s := r.Summary
		if s.Samples < 2 || s.CPU == nil || s.Seconds < 0.2 || s.Seconds > 0.5 {
			t.Errorf("window %d: %d samples over %v s, cpu %v", i, s.Samples, s.Seconds, s.CPU)
		}
		for _, smp := range r.Samples {
			if !smp.Time.After(s.Start) || smp.Time.After(s.End) {
				t.Errorf("window %d [%v, %v]: a sample at %v", i, s.Start, s.End, smp.Time)
			}
		}
		if len(r.Samples) == 0 || len(r.Samples) > s.Samples+1 {
			t.Errorf("window %d: %d samples kept for %d summarised", i, len(r.Samples), s.Samples)
		}
	}
	if !reps[1].Summary.Start.After(reps[0].Summary.End) {
		t.Errorf("second window starts %v, before the first ends %v", reps[1].Summary.Start, reps[0].Summary.End)
	}
}
