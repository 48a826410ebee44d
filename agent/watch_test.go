package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/wire"
)

func command(kind wire.CommandKind, spec wire.CommandSpec) *wire.Command {
	now := time.Now().UTC()
	return &wire.Command{V: wire.SchemaVersion, ID: wire.NewID(), IssuedAt: now, ExpiresAt: now.Add(time.Minute), Kind: kind, Spec: spec}
}

// The policy of a watch: its duration within policy.max_watch_duration
// (not the load tests' max_duration), an interval within it, a URL that
// names a port; of a serve: its address inside policy.serve_allow
// (loopback by default), its duration within policy.max_serve_duration.
func TestWatchAndServePolicy(t *testing.T) {
	a, log := newTestAgent(t)
	a.cfg.Policy.MaxDuration = time.Minute
	a.cfg.Policy.MaxWatchDuration = time.Hour
	a.cfg.Policy.MaxServeDuration = 2 * time.Hour
	for _, c := range []struct {
		cmd  *wire.Command
		want string // "" accepted
	}{
		{command(wire.KindProbe, wire.CommandSpec{Probe: &wire.ProbeSpec{DurationMS: 3_600_001}}), "duration 1h0m0.001s over cap 1h0m0s (policy.max_watch_duration)"},
		{command(wire.KindProbe, wire.CommandSpec{Probe: &wire.ProbeSpec{DurationMS: 1000, URL: "ftp://10.0.0.2/"}}), `watch URL "ftp://10.0.0.2/": want an http:// or https:// URL`},
		{command(wire.KindProbe, wire.CommandSpec{Probe: &wire.ProbeSpec{DurationMS: 1000, URL: "http://10.0.0.2:0/"}}), `bad port "0"`},
		{command(wire.KindProbe, wire.CommandSpec{Probe: &wire.ProbeSpec{DurationMS: 1000, URL: "http://10.0.0.2:99999/"}}), `bad port "99999"`},
		{command(wire.KindServe, wire.CommandSpec{Serve: &wire.ServeSpec{Addr: "10.0.0.2:8080", DurationMS: 1000}}), "serve address 10.0.0.2: not in policy.serve_allow [127.0.0.0/8 ::1/128]"},
		{command(wire.KindServe, wire.CommandSpec{Serve: &wire.ServeSpec{Addr: "0.0.0.0:8080", DurationMS: 1000}}), "serve address 0.0.0.0: not in policy.serve_allow"},
		{command(wire.KindServe, wire.CommandSpec{Serve: &wire.ServeSpec{Addr: "board.lan:8080", DurationMS: 1000}}), `serve address "board.lan:8080": want an IP address and a port`},
		{command(wire.KindServe, wire.CommandSpec{Serve: &wire.ServeSpec{Addr: "127.0.0.1:0", DurationMS: 7_200_001}}), "serve duration 2h0m0.001s: want 1ms..2h0m0s (policy.max_serve_duration)"},
		{command(wire.KindMark, wire.CommandSpec{Mark: &wire.MarkSpec{CommandID: "01JB6Z3H00A1B2C3D4E5F6G7H8", Edge: wire.MarkStart}}), "no running watch 01JB6Z3H00A1B2C3D4E5F6G7H8"},
		{command(wire.KindServe, wire.CommandSpec{Serve: &wire.ServeSpec{Addr: "127.0.0.1:0", DurationMS: 5_400_000}}), ""},
		{command(wire.KindProbe, wire.CommandSpec{Probe: &wire.ProbeSpec{DurationMS: 3_600_000, URL: "https://[::1]/"}}), ""},
	} {
		a.command(context.Background(), incoming{cmd: c.cmd})
		ev := log.last(c.cmd.ID)
		switch {
		case c.want == "" && (ev == nil || ev.State != wire.StateAccepted && ev.State != wire.StateRunning):
			t.Errorf("%s: %+v, want accepted", c.cmd.Kind, ev)
		case c.want != "" && (ev == nil || ev.State != wire.StateRejected || !strings.Contains(ev.Reason, c.want)):
			t.Errorf("%q: got %+v", c.want, ev)
		}
		a.stopServing()
	}
	// A board measured from another machine lists its address; the
	// unspecified address only when it is listed as such.
	a.cfg.Policy.ServeAllow = []string{"127.0.0.0/8", "192.0.2.13"}
	if err := a.checkServeAddr("192.0.2.13:8080"); err != nil {
		t.Errorf("a listed address: %v", err)
	}
	for _, addr := range []string{"192.0.2.14:8080", "0.0.0.0:8080", "[::]:8080"} {
		if err := a.checkServeAddr(addr); err == nil {
			t.Errorf("%s allowed by %v", addr, a.cfg.Policy.ServeAllow)
		}
	}
	a.cfg.Policy.ServeAllow = []string{"0.0.0.0"}
	if err := a.checkServeAddr("0.0.0.0:8080"); err != nil {
		t.Errorf("0.0.0.0 listed: %v", err)
	}
	if err := a.checkServeAddr("192.0.2.13:8080"); err == nil {
		t.Error("0.0.0.0 listed allows 192.0.2.13")
	}
	if p, ok := watchPortOf(t, "http://10.0.0.2/"); !ok || p != 80 {
		t.Errorf("port %d", p)
	}
	if p, ok := watchPortOf(t, "https://10.0.0.2/"); !ok || p != 443 {
		t.Errorf("port %d", p)
	}
}

func watchPortOf(t *testing.T, u string) (int, bool) {
	t.Helper()
	p, err := watchPort(u)
	return p, err == nil
}

// The fleet's boards, one address per line: a load test may target them
// besides the allowlist, and nothing else; a change of the file is read
// at the next command; a bad line refuses the file (at start: the
// config) and keeps the list read before.
func TestFleetFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "boards")
	write := func(s string) {
		t.Helper()
		// A different size each time: the modification time alone may
		// not move within the file system's granularity.
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("# the lab's boards\n192.0.2.13\n2001:db8::13 # pi3-02\n\n")
	c := DefaultConfig().Policy
	c.FleetFile = path
	p, err := NewPolicy(c)
	if err != nil {
		t.Fatal(err)
	}
	res := fakeResolver{"pi3.lan": {"192.0.2.13"}, "mixed.lan": {"192.0.2.13", "192.0.2.99"}}
	for _, tc := range []struct {
		url, want string
	}{
		{"http://192.0.2.13:8080/", ""},
		{"http://[2001:db8::13]/", ""},
		{"http://[::ffff:192.0.2.13]/", ""},
		{"http://pi3.lan/", ""},
		{"http://127.0.0.1/", ""},
		{"http://192.0.2.14/", "target 192.0.2.14 not in allowlist [127.0.0.0/8 ::1/128] nor among the 2 boards of policy.fleet_file"},
		{"http://192.0.2.0/", "target 192.0.2.0 not in allowlist"},
		{"http://mixed.lan/", "target mixed.lan resolves to 192.0.2.99, not in allowlist"},
	} {
		_, err := p.CheckTarget(context.Background(), tc.url, res)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s refused: %v", tc.url, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.url, err, tc.want)
		}
	}
	write("192.0.2.14\n")
	if _, err := p.CheckTarget(context.Background(), "http://192.0.2.14/", res); err != nil {
		t.Errorf("a board added: %v", err)
	}
	if _, err := p.CheckTarget(context.Background(), "http://192.0.2.13/", res); err == nil {
		t.Error("a board removed is still a target")
	}
	write("192.0.2.14\n10.0.0.0/8\n")
	_, err = p.CheckTarget(context.Background(), "http://192.0.2.14/", res)
	if err != nil {
		t.Errorf("a bad file must keep the list before: %v", err)
	}
	_, err = p.CheckTarget(context.Background(), "http://10.1.2.3/", res)
	if err == nil || !strings.Contains(err.Error(), `line 2: "10.0.0.0/8" is a network: list each board's address`) {
		t.Errorf("a network in the file: %v", err)
	}
	for _, bad := range []string{"10.0.0.0/8", "pi3.lan", "0.0.0.0", "::", "224.0.0.1", "ff02::1", "255.255.255.255", "fe80::1%eth0", "10.0.0.300"} {
		if _, err := parseFleetFile([]byte("192.0.2.13\n" + bad + "\n")); err == nil {
			t.Errorf("%q taken for a board", bad)
		}
	}
	var big strings.Builder
	for i := range maxFleetBoards + 1 {
		fmt.Fprintf(&big, "10.%d.%d.%d\n", i>>16, (i>>8)&255, i&255)
	}
	if _, err := parseFleetFile([]byte(big.String())); err == nil {
		t.Errorf("%d boards taken", maxFleetBoards+1)
	}
	// At start, a bad file is the config's error, naming its line.
	write("192.0.2.13\nnot-an-address\n")
	cfg := DefaultConfig()
	cfg.DeviceID, cfg.Policy.FleetFile = "pi1", path
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "policy.fleet_file") || !strings.Contains(err.Error(), `line 2: "not-an-address" is not an IP address`) {
		t.Errorf("config: %v", err)
	}
	cfg.Policy.FleetFile = filepath.Join(dir, "none")
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "policy.fleet_file") {
		t.Errorf("config without its file: %v", err)
	}
}

func TestThinSamples(t *testing.T) {
	run := func(n int) wire.Run {
		return wire.Run{System: &wire.System{Samples: make([]wire.SysSample, n)}}
	}
	runs := []wire.Run{run(700), run(500), {}}
	thinSamples(runs, 600)
	if n0, n1 := len(runs[0].System.Samples), len(runs[1].System.Samples); n0+n1 > 600 || n0 != 350 || n1 != 250 ||
		runs[0].System.Stride != 2 || runs[1].System.Stride != 2 {
		t.Errorf("kept %d and %d, strides %d and %d", n0, n1, runs[0].System.Stride, runs[1].System.Stride)
	}
	few := []wire.Run{run(600)}
	if thinSamples(few, 600); len(few[0].System.Samples) != 600 || few[0].System.Stride != 0 {
		t.Errorf("600 samples thinned: %d", len(few[0].System.Samples))
	}
}

// The whole sequence of a run across two devices, both agents in this
// process, the test relaying as the collector will: a watch on the
// target (what listens on nginx's port), a load test of 2 runs on the
// loader, its window events relayed as marks, done once the load is
// over. The watch's result has one run per window, each as long as the
// load's and starting with it, nginx busy in each.
func TestWatchWindowsRelayed(t *testing.T) {
	ng := testenv.Nginx(t, 1)
	target, _ := newTestAgent(t)
	tres := &resultLog{}
	target.SetLink(tres, nil)
	loader, _ := newTestAgent(t)
	lres := &resultLog{}
	loader.SetLink(lres, nil)
	ctx := context.Background()

	watch := command(wire.KindProbe, wire.CommandSpec{Probe: &wire.ProbeSpec{DurationMS: 60_000, IntervalMS: 200, URL: "http://" + ng.Addr + "/"}})
	target.command(ctx, incoming{cmd: watch})
	watching := make(chan struct{})
	go func() {
		defer close(watching)
		target.execute(ctx, <-target.jobs)
	}()
	var running *wire.Event
	testenv.Until(t, "the watch to run", func() bool {
		ev := tres.last(watch.ID)
		if ev != nil && ev.State == wire.StateRunning {
			running = ev
		}
		return running != nil
	})
	if want := fmt.Sprintf("watching what listens on port %s: process %d", ng.Addr[strings.LastIndexByte(ng.Addr, ':')+1:], ng.Master); running.Reason != want {
		t.Errorf("running: %q, want %q", running.Reason, want)
	}

	lt := command(wire.KindLoadTest, wire.CommandSpec{LoadTest: &wire.LoadTestSpec{URL: "http://" + ng.Addr + "/", Connections: 4,
		DurationMS: 1500, KeepAlive: true, Repeat: 2}})
	loader.command(ctx, incoming{cmd: lt})
	loading := make(chan struct{})
	go func() {
		defer close(loading)
		loader.execute(ctx, <-loader.jobs)
	}()
	// The collector's relay: each window event of the loader, as a mark.
	relayed := 0
	// When each mark was relayed: a loaded box delays the relay itself
	// (this test's goroutine), and the watch can only follow its marks.
	relayedAt := map[string]time.Time{}
	relay := func() {
		lres.mu.Lock()
		var evs []*wire.Event
		for _, ev := range lres.events {
			if ev.CommandID == lt.ID && ev.Window != nil {
				evs = append(evs, ev)
			}
		}
		lres.mu.Unlock()
		for _, ev := range evs[relayed:] {
			relayedAt[fmt.Sprint(ev.Window.Run, ev.Window.Edge)] = time.Now()
			target.command(ctx, incoming{cmd: command(wire.KindMark, wire.CommandSpec{Mark: &wire.MarkSpec{CommandID: watch.ID,
				Run: ev.Window.Run, Edge: ev.Window.Edge}})})
		}
		relayed = len(evs)
	}
	for {
		relay()
		select {
		case <-loading:
			relay()
			target.command(ctx, incoming{cmd: command(wire.KindMark, wire.CommandSpec{Mark: &wire.MarkSpec{CommandID: watch.ID, Edge: wire.MarkDone}})})
			goto done
		case <-time.After(10 * time.Millisecond):
		}
	}
done:
	select {
	case <-watching:
	case <-time.After(20 * time.Second):
		t.Fatal("the watch did not end at done")
	}
	if relayed != 4 {
		t.Errorf("%d window events relayed, want 4 (2 runs)", relayed)
	}
	if ev := tres.last(watch.ID); ev == nil || ev.State != wire.StateSucceeded {
		t.Fatalf("watch ended %+v", ev)
	}
	load, w := lres.results[0], tres.results[0]
	if len(load.Runs) != 2 || len(w.Runs) != 2 {
		t.Fatalf("%d load runs, %d watch runs", len(load.Runs), len(w.Runs))
	}
	if w.Kind != wire.KindProbe || w.Spec.URL != "http://"+ng.Addr+"/" || w.Spec.IntervalMS != 200 {
		t.Errorf("watch result %s %+v", w.Kind, w.Spec)
	}
	for i, r := range w.Runs {
		l := load.Runs[i]
		if r.Window == nil || r.Window.Run != i || r.Window.Open || r.Interrupted {
			t.Errorf("watch run %d: window %+v, interrupted %v", i, r.Window, r.Interrupted)
		}
		// One clock here: the relay's delay is all that separates them,
		// the time this test took to relay each mark and the watch's to
		// take it.
		lagStart := max(relayedAt[fmt.Sprint(i, wire.MarkStart)].Sub(l.StartedAt), 0)
		lagEnd := max(relayedAt[fmt.Sprint(i, wire.MarkEnd)].Sub(l.StartedAt.Add(time.Duration(l.DurationUS)*time.Microsecond)), 0)
		if d := r.StartedAt.Sub(l.StartedAt); d < 0 || d > lagStart+500*time.Millisecond {
			t.Errorf("run %d: the watch's window starts %v after the load's (the mark relayed %v after it)", i, d, lagStart)
		}
		if d := time.Duration(r.DurationUS-l.DurationUS) * time.Microsecond; d < -lagStart-300*time.Millisecond || d > lagEnd+300*time.Millisecond {
			t.Errorf("run %d: the watch's window %v, the load's %v (its marks relayed %v and %v late)", i, time.Duration(r.DurationUS)*time.Microsecond,
				time.Duration(l.DurationUS)*time.Microsecond, lagStart, lagEnd)
		}
		s := r.System
		if s == nil || len(s.Procs) != 1 || len(s.Summary.Procs) != 1 || s.Summary.Procs[0].CPUBP == nil || s.Summary.Procs[0].CPUBP.Mean < 500 {
			t.Errorf("run %d: nginx %+v", i, s)
		}
		if s != nil && (s.Summary.Samples < 3 || len(s.Samples) < 3) {
			t.Errorf("run %d: %d samples summarised, %d kept", i, s.Summary.Samples, len(s.Samples))
		}
	}
	if len(w.Warnings) > 0 {
		t.Errorf("warnings %q", w.Warnings)
	}
}

// A watch that no mark reaches records its whole duration as one run; a
// watch of a port nothing listens on says so; one cancelled keeps what it
// recorded, its open window marked open and interrupted.
func TestWatchWithoutMarks(t *testing.T) {
	a, _ := newTestAgent(t)
	log := &resultLog{}
	a.SetLink(log, nil)
	ctx := context.Background()
	free := testenv.FreeAddr(t)
	w := command(wire.KindProbe, wire.CommandSpec{Probe: &wire.ProbeSpec{DurationMS: 600, IntervalMS: 100, URL: "http://" + free + "/"}})
	a.command(ctx, incoming{cmd: w})
	a.execute(ctx, <-a.jobs)
	r := log.results[0]
	port := free[strings.LastIndexByte(free, ':')+1:]
	if len(r.Runs) != 1 || r.Runs[0].Window != nil || r.Runs[0].DurationUS < 550_000 || r.Runs[0].System == nil ||
		len(r.Warnings) != 1 || r.Warnings[0] != "watching the machine: nothing listens on port "+port+" here" {
		t.Errorf("no marks: %d runs %+v, warnings %q", len(r.Runs), r.Runs, r.Warnings)
	}

	w = command(wire.KindProbe, wire.CommandSpec{Probe: &wire.ProbeSpec{DurationMS: 30_000, IntervalMS: 100, Watch: []string{"1"}}})
	a.command(ctx, incoming{cmd: w})
	j := <-a.jobs
	done := make(chan struct{})
	go func() { defer close(done); a.execute(ctx, j) }()
	testenv.Until(t, "the watch to run", func() bool { a.mu.Lock(); defer a.mu.Unlock(); return a.cur == j })
	other := command(wire.KindMark, wire.CommandSpec{Mark: &wire.MarkSpec{CommandID: wire.NewID(), Edge: wire.MarkStart}})
	a.command(ctx, incoming{cmd: other})
	if ev := log.last(other.ID); ev == nil || ev.State != wire.StateRejected || !strings.HasPrefix(ev.Reason, "no running watch ") {
		t.Errorf("a mark of another command: %+v", ev)
	}
	for _, m := range []struct {
		edge string
		run  int
	}{{wire.MarkStart, 7}, {wire.MarkEnd, 8}, {wire.MarkEnd, 7}, {wire.MarkStart, 7}} {
		a.command(ctx, incoming{cmd: command(wire.KindMark, wire.CommandSpec{Mark: &wire.MarkSpec{CommandID: w.ID, Run: m.run, Edge: m.edge}})})
		time.Sleep(250 * time.Millisecond)
	}
	a.command(ctx, incoming{cmd: command(wire.KindCancel, wire.CommandSpec{Cancel: &wire.CancelSpec{CommandID: w.ID}})})
	<-done
	r = log.results[1]
	if r.Outcome != wire.StateCancelled || len(r.Runs) != 2 || *r.Runs[0].Window != (wire.WatchWindow{Run: 7}) ||
		*r.Runs[1].Window != (wire.WatchWindow{Run: 7, Open: true}) || !r.Runs[1].Interrupted || r.Runs[0].Interrupted {
		t.Errorf("cancelled: %s, runs %+v", r.Outcome, r.Runs)
	}
	if len(r.Warnings) != 1 || r.Warnings[0] != "end of run 8's window marked, but it was not open" {
		t.Errorf("warnings %q", r.Warnings)
	}
	if d := r.Runs[0].DurationUS; d < 400_000 || d > 1_000_000 {
		t.Errorf("run 7's first window lasted %d us, from its start to its own end (500 ms)", d)
	}
}

// TestWatchMarksOutOfOrder: the end of run i and the start of run i+1
// (or done) are relayed a few milliseconds apart, and the broker's client
// may hand them to the agent in either order: a start or done that comes
// before the open window's end waits up to markGrace for it, and each
// window closes at its own end. A start whose window's end never comes
// closes that window as never ended, as before.
func TestWatchMarksOutOfOrder(t *testing.T) {
	a, _ := newTestAgent(t)
	log := &resultLog{}
	a.SetLink(log, nil)
	ctx := context.Background()
	w := command(wire.KindProbe, wire.CommandSpec{Probe: &wire.ProbeSpec{DurationMS: 30_000, IntervalMS: 100, Watch: []string{"1"}}})
	a.command(ctx, incoming{cmd: w})
	j := <-a.jobs
	done := make(chan struct{})
	go func() { defer close(done); a.execute(ctx, j) }()
	testenv.Until(t, "the watch to run", func() bool { a.mu.Lock(); defer a.mu.Unlock(); return a.cur == j })
	mark := func(edge string, run int) {
		a.command(ctx, incoming{cmd: command(wire.KindMark, wire.CommandSpec{Mark: &wire.MarkSpec{CommandID: w.ID, Run: run, Edge: edge}})})
	}
	mark(wire.MarkStart, 0)
	time.Sleep(400 * time.Millisecond)
	mark(wire.MarkStart, 1) // before run 0's end
	mark(wire.MarkEnd, 0)
	time.Sleep(400 * time.Millisecond)
	mark(wire.MarkStart, 2) // run 1's end never comes
	time.Sleep(400*time.Millisecond + markGrace)
	mark(wire.MarkDone, 0) // before run 2's end
	mark(wire.MarkEnd, 2)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the watch did not end at done")
	}
	r := log.results[0]
	want := []wire.WatchWindow{{Run: 0}, {Run: 1, Open: true}, {Run: 2}}
	if r.Outcome != wire.StateSucceeded || len(r.Runs) != len(want) {
		t.Fatalf("%s, %d runs, warnings %q: want %d", r.Outcome, len(r.Runs), r.Warnings, len(want))
	}
	for i, run := range r.Runs {
		if run.Window == nil || *run.Window != want[i] {
			t.Errorf("run %d: window %+v, want %+v", i, run.Window, want[i])
		}
		if d := time.Duration(run.DurationUS) * time.Microsecond; i != 1 && (d < 300*time.Millisecond || d > 400*time.Millisecond+markGrace) {
			t.Errorf("run %d lasted %v: want its 400 ms, closed at its own end", i, d)
		}
	}
	if len(r.Warnings) != 1 || r.Warnings[0] != "window of run 2: started again before its end was marked" {
		t.Errorf("warnings %q: want the one of run 1's end that never came", r.Warnings)
	}
}
