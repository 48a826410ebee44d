package collector

import (
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/broker"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/scheduledb"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/spool"
	"github.com/edgebench/edgebench/transport"
	"github.com/edgebench/edgebench/wire"
)

// scripted is a device over the real broker whose answers the test
// writes: it records the commands it gets and publishes the events and
// results the test gives it.
type scripted struct {
	t    *testing.T
	c    *transport.Client
	id   string
	mu   sync.Mutex
	cmds []*wire.Command
	seq  map[string]uint32
}

func newScripted(t *testing.T, brokerURL, id, password string, addrs ...string) *scripted {
	t.Helper()
	sp, err := spool.Open(t.TempDir(), spool.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := transport.Dial(transport.ClientConfig{Broker: brokerURL, Username: id, Password: password, Fleet: "lab", Device: id,
		RetryInterval: 200 * time.Millisecond},
		transport.Options{Spool: sp, Birth: &wire.Status{BootID: "boot-" + id, Info: &wire.DeviceInfo{Board: "board of " + id, Addrs: addrs}}})
	if err != nil {
		t.Fatal(err)
	}
	d := &scripted{t: t, c: c, id: id, seq: map[string]uint32{}}
	t.Cleanup(func() { c.Close() })
	if err := c.SubscribeCommands(func(_ context.Context, cmd *wire.Command) {
		d.mu.Lock()
		d.cmds = append(d.cmds, cmd)
		d.mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	return d
}

// commands are the commands of kind the device got, in order.
func (d *scripted) commands(kind wire.CommandKind) []*wire.Command {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []*wire.Command
	for _, c := range d.cmds {
		if c.Kind == kind {
			out = append(out, c)
		}
	}
	return out
}

// waitCommands waits for n commands of kind and returns them.
func (d *scripted) waitCommands(kind wire.CommandKind, n int) []*wire.Command {
	d.t.Helper()
	testenv.Until(d.t, d.id+"'s "+string(kind)+" commands", func() bool { return len(d.commands(kind)) >= n })
	return d.commands(kind)
}

// event publishes the next event of command id, or the one of sequence
// number seq when it is not 0.
func (d *scripted) event(id string, seq uint32, state wire.EventState, reason string, w *wire.WindowEdge, result string) {
	d.t.Helper()
	d.mu.Lock()
	if seq == 0 {
		d.seq[id]++
		seq = d.seq[id]
	} else if seq > d.seq[id] {
		d.seq[id] = seq
	}
	d.mu.Unlock()
	if err := d.c.PublishEvent(context.Background(), &wire.Event{V: wire.SchemaVersion, CommandID: id, Seq: seq, State: state,
		Reason: reason, Window: w, ResultID: result, At: time.Now().UTC()}); err != nil {
		d.t.Fatal(err)
	}
}

// result publishes r and waits for the collector's ack.
func (d *scripted) result(r *wire.Result) error {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := d.c.PublishResult(ctx, r); err != nil {
		d.t.Fatal(err)
	}
	return d.c.WaitAck(ctx, r.ID)
}

// pairCollector is a collector with laptop and pi3 of fleet lab as
// scripted devices, its pairs' waits shortened.
func pairCollector(t *testing.T) (*Collector, *scripted, *scripted) {
	t.Helper()
	listen := testenv.FreeAddr(t)
	col := startCollector(t, Config{DB: filepath.Join(t.TempDir(), "edgebench.db"), Listen: listen,
		Accounts: &broker.Accounts{Collector: broker.Account{Username: "collector", Password: "collector-secret"},
			Devices: []broker.Account{{Fleet: "lab", ID: "laptop", Password: "l"}, {Fleet: "lab", ID: "pi3", Password: "p"}}},
		pairTimes: pairTimes{watchStart: 2 * time.Second, join: 2 * time.Second}})
	t.Cleanup(func() { col.Close() })
	loader := newScripted(t, "tcp://"+listen, "laptop", "l", "192.168.2.7")
	target := newScripted(t, "tcp://"+listen, "pi3", "p", "192.168.2.13", "fd00::13")
	testenv.Until(t, "both devices online", func() bool {
		devs, _ := col.Store().Devices(context.Background())
		return len(devs) == 2 && devs[0].Online && devs[1].Online && devs[1].Info != nil
	})
	return col, loader, target
}

// pairState waits for pair id to end and returns it.
func pairEnded(t *testing.T, col *Collector, id string) *store.Pair {
	t.Helper()
	var p *store.Pair
	testenv.Until(t, "the pair's end", func() bool {
		var err error
		p, err = col.Store().Pair(context.Background(), id)
		return err == nil && store.PairDone(p.State)
	})
	return p
}

// TestPairRelaysTheLoadersWindows: the load waits for the watch to run;
// the loader's window edges reach the watch as marks in the loader's own
// order, even when its events are received out of it, then done; both
// results are kept apart and joined into one result of the target's.
func TestPairRelaysTheLoadersWindows(t *testing.T) {
	ctx := context.Background()
	col, loader, target := pairCollector(t)
	tr, err := col.Trigger(ctx, scheduledb.TriggerRequest{Device: "laptop", TargetDevice: "pi3",
		Spec: wire.LoadTestSpec{URL: "http://192.168.2.13:8080/", Connections: 2, DurationMS: 1000, Repeat: 2, Watch: []string{"nginx"},
			Labels: []wire.Label{{K: "server", V: "nginx"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Pair == nil || tr.Pair.Loader != "lab/laptop" || tr.Pair.Target != "lab/pi3" || !slices.Equal(tr.Devices, []string{"lab/laptop", "lab/pi3"}) {
		t.Errorf("triggered %+v %+v", tr, tr.Pair)
	}
	watch := target.waitCommands(wire.KindProbe, 1)[0]
	ps := watch.Spec.Probe
	// The load's span: 2 runs of 1 s, each with a timeout's drain and the
	// probe's edges (8 s), and the margin.
	if watch.ID != tr.Pair.WatchID || ps.URL != "http://192.168.2.13:8080/" || ps.DurationMS != 46_000 || ps.IntervalMS != 1000 ||
		!slices.Equal(ps.Watch, []string{"nginx"}) || watch.ExpiresAt.Sub(watch.IssuedAt) != 2*time.Second {
		t.Errorf("the watch: %+v, %+v", watch, ps)
	}
	target.event(watch.ID, 0, wire.StateAccepted, "", nil, "")
	time.Sleep(2 * pairTick)
	if n := len(loader.commands(wire.KindLoadTest)); n != 0 {
		t.Fatalf("the load sent before the watch runs")
	}
	target.event(watch.ID, 0, wire.StateRunning, "watching nginx", nil, "")
	load := loader.waitCommands(wire.KindLoadTest, 1)[0]
	if lt := load.Spec.LoadTest; load.ID != tr.CommandID || lt.Watch != nil || lt.Repeat != 2 || lt.Labels[0].V != "nginx" {
		t.Errorf("the load: %+v %+v", load, lt)
	}
	loader.event(load.ID, 1, wire.StateAccepted, "", nil, "")
	loader.event(load.ID, 2, wire.StateRunning, "", nil, "")
	// The end of run 0's window before its start: the collector waits for
	// the start.
	loader.event(load.ID, 4, wire.StateRunning, "measured window ends (run 0)", &wire.WindowEdge{Edge: wire.MarkEnd, Run: 0}, "")
	time.Sleep(3 * pairTick)
	if n := len(target.commands(wire.KindMark)); n != 0 {
		t.Errorf("%d marks relayed before the window's start arrived", n)
	}
	loader.event(load.ID, 3, wire.StateRunning, "measured window starts (run 0)", &wire.WindowEdge{Edge: wire.MarkStart, Run: 0}, "")
	loader.event(load.ID, 5, wire.StateRunning, "measured window starts (run 1)", &wire.WindowEdge{Edge: wire.MarkStart, Run: 1}, "")
	loader.event(load.ID, 6, wire.StateRunning, "measured window ends (run 1)", &wire.WindowEdge{Edge: wire.MarkEnd, Run: 1}, "")
	target.waitCommands(wire.KindMark, 4)

	// The loader's result, then its end: done to the watch.
	rng := rand.New(rand.NewPCG(9, 9))
	now := time.Now()
	lres := storetest.FakeResult(rng, "lab", "laptop", map[string]string{"board": "thinkpad"}, now, 1000, 800)
	lres.CommandID, lres.Spec.URL, lres.Spec.Repeat = load.ID, "http://192.168.2.13:8080/", 2
	lres.Runs = append(lres.Runs, storetest.FakeRun(rng, now.Add(12*time.Second), 1100, 700, 1000))
	if err := loader.result(lres); err != nil {
		t.Fatalf("the loader's result not taken: %v", err)
	}
	loader.event(load.ID, 7, wire.StateSucceeded, "", nil, lres.ID)
	marks := target.waitCommands(wire.KindMark, 5)
	var got []string
	for _, m := range marks {
		if m.Spec.Mark.CommandID != watch.ID {
			t.Errorf("a mark of %s, want the watch %s", m.Spec.Mark.CommandID, watch.ID)
		}
		got = append(got, m.Spec.Mark.Edge+":"+string(rune('0'+m.Spec.Mark.Run)))
	}
	if want := []string{"start:0", "end:0", "start:1", "end:1", "done:0"}; !slices.Equal(got, want) {
		t.Errorf("marks %v, want %v", got, want)
	}
	// Nothing is a result before the join.
	if rows, err := col.Store().Runs(ctx, store.Filter{}); err != nil || len(rows) != 0 {
		t.Errorf("%d results before the join (%v)", len(rows), err)
	}

	// The watch's result, one run per window.
	tres := storetest.FakeResult(rng, "lab", "pi3", map[string]string{"board": "pi3"}, now, 0, 0)
	tres.CommandID, tres.Kind = watch.ID, wire.KindProbe
	tres.Runs = []wire.Run{storetest.FakeRun(rng, now, 0, 1, 9000), storetest.FakeRun(rng, now.Add(12*time.Second), 0, 1, 9500)}
	for i := range tres.Runs {
		tres.Runs[i].Window, tres.Runs[i].Latency, tres.Runs[i].Timeline = &wire.WatchWindow{Run: i}, nil, nil
	}
	if err := target.result(tres); err != nil {
		t.Fatalf("the target's result not taken: %v", err)
	}
	target.event(watch.ID, 0, wire.StateSucceeded, "", nil, tres.ID)
	p := pairEnded(t, col, tr.CommandID)
	if p.State != store.PairSucceeded || p.ResultID != tres.ID {
		t.Fatalf("pair %+v", p)
	}
	j, err := col.Store().Result(ctx, p.ResultID)
	if err != nil {
		t.Fatal(err)
	}
	if j.Device != "pi3" || j.CommandID != load.ID || j.Loader == nil || j.Loader.ResultID != lres.ID || len(j.Runs) != 2 ||
		j.Runs[1].Completed != lres.Runs[1].Completed || j.Runs[1].System.Summary.CPU.User.Mean != 9500 || j.Labels["board"] != "pi3" {
		t.Errorf("joined %s/%s of %s, loader %+v, %d runs, labels %v", j.Fleet, j.Device, j.CommandID, j.Loader, len(j.Runs), j.Labels)
	}
	rows, err := col.Store().Runs(ctx, store.Filter{})
	if err != nil || len(rows) != 1 || rows[0].Device != "pi3" || rows[0].Loader != "lab/laptop" {
		t.Errorf("results %+v (%v): want the joined one alone", rows, err)
	}
	if st := col.Stats(); st.Parts != 2 || st.Stored != 1 {
		t.Errorf("stats %+v: want 2 parts kept, 1 result stored", st)
	}
}

// TestPairFailures: a watch that never runs, a target's result that never
// arrives, a cancel and a device that claims a joined result: each ends
// with its reason, tells the devices still at it to stop, and stores no
// result.
func TestPairFailures(t *testing.T) {
	ctx := context.Background()
	col, loader, target := pairCollector(t)
	trigger := func() *Triggered {
		t.Helper()
		tr, err := col.Trigger(ctx, scheduledb.TriggerRequest{Device: "laptop", TargetDevice: "pi3",
			Spec: wire.LoadTestSpec{URL: "http://[fd00::13]:8080/", Connections: 2, DurationMS: 1000}})
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	cancels := func(d *scripted, id string) int {
		n := 0
		for _, c := range d.commands(wire.KindCancel) {
			if c.Spec.Cancel.CommandID == id {
				n++
			}
		}
		return n
	}

	// The watch accepted, never running: failed after 2 s, cancelled.
	tr := trigger()
	target.event(tr.Pair.WatchID, 0, wire.StateAccepted, "", nil, "")
	p := pairEnded(t, col, tr.CommandID)
	if p.State != store.PairFailed || p.Reason != "the watch on the target lab/pi3 did not start within 2s (its last word: accepted)" {
		t.Errorf("pair %+v", p)
	}
	if n := cancels(target, tr.Pair.WatchID); n != 1 || len(loader.commands(wire.KindLoadTest)) != 0 {
		t.Errorf("%d cancels of the watch, %d loads sent", n, len(loader.commands(wire.KindLoadTest)))
	}

	// The load over, the target's result never sent.
	tr = trigger()
	target.event(tr.Pair.WatchID, 0, wire.StateRunning, "", nil, "")
	load := loader.waitCommands(wire.KindLoadTest, 1)[0]
	rng := rand.New(rand.NewPCG(1, 9))
	lres := storetest.FakeResult(rng, "lab", "laptop", nil, time.Now(), 1000, 800)
	lres.CommandID = load.ID
	if err := loader.result(lres); err != nil {
		t.Fatal(err)
	}
	loader.event(load.ID, 0, wire.StateSucceeded, "", nil, lres.ID)
	// The watch ends on the mark done, as an agent's does: after the load.
	testenv.Until(t, "the joining", func() bool { p, _ := col.Store().Pair(ctx, tr.CommandID); return p.State == store.PairJoining })
	target.event(tr.Pair.WatchID, 0, wire.StateSucceeded, "", nil, "01M9ZZZZZZZZZZZZZZZZZZZZZZ")
	p = pairEnded(t, col, tr.CommandID)
	if p.State != store.PairFailed || p.Reason != "the target's result did not reach the collector within 2s of the load's end" {
		t.Errorf("pair %+v", p)
	}

	// Cancelled while the load runs: both devices told, the run ended.
	tr = trigger()
	target.event(tr.Pair.WatchID, 0, wire.StateRunning, "", nil, "")
	load = loader.waitCommands(wire.KindLoadTest, 2)[1]
	loader.event(load.ID, 0, wire.StateRunning, "", nil, "")
	testenv.Until(t, "the loading", func() bool { p, _ := col.Store().Pair(ctx, tr.CommandID); return p.State == store.PairLoading })
	if _, err := col.Cancel(ctx, tr.Pair.WatchID); err != nil { // by the watch's id as well as the run's
		t.Fatal(err)
	}
	p = pairEnded(t, col, tr.CommandID)
	if p.State != store.PairCancelled || cancels(target, tr.Pair.WatchID) != 1 || cancels(loader, load.ID) != 1 {
		t.Errorf("pair %+v, cancels: watch %d, load %d", p, cancels(target, tr.Pair.WatchID), cancels(loader, load.ID))
	}
	if _, err := col.Cancel(ctx, tr.CommandID); !errors.Is(err, store.ErrNotRunning) {
		t.Errorf("a cancel of an ended run: %v", err)
	}

	// The target's URL must be its own: any other host is refused before
	// anything is sent.
	for _, u := range []string{"http://192.168.2.7:8080/", "http://192.168.2.14/", "http://localhost:8080/"} {
		if _, err := col.Trigger(ctx, scheduledb.TriggerRequest{Device: "laptop", TargetDevice: "pi3", Spec: wire.LoadTestSpec{URL: u, Connections: 1}}); err == nil ||
			!strings.Contains(err.Error(), "is not an address of the target lab/pi3, which reports 192.168.2.13, fd00::13") {
			t.Errorf("%s: %v", u, err)
		}
	}

	// A device may not claim a joined result.
	forged := storetest.FakeResult(rng, "lab", "pi3", nil, time.Now(), 1000, 800)
	forged.Loader = &wire.Loader{Fleet: "lab", Device: "laptop", ResultID: wire.NewID(), WatchID: wire.NewID()}
	if err := target.result(forged); err == nil || !strings.Contains(err.Error(), "only the collector joins a run across two devices") {
		t.Errorf("a device's joined result: %v", err)
	}

	// The load over, the target gone before its watch ended: failed at
	// once with that reason, not after the join's wait. Last: the
	// target is gone.
	tr = trigger()
	target.event(tr.Pair.WatchID, 0, wire.StateRunning, "", nil, "")
	load = loader.waitCommands(wire.KindLoadTest, 3)[2]
	lres = storetest.FakeResult(rng, "lab", "laptop", nil, time.Now(), 1000, 800)
	lres.CommandID = load.ID
	if err := loader.result(lres); err != nil {
		t.Fatal(err)
	}
	loader.event(load.ID, 0, wire.StateSucceeded, "", nil, lres.ID)
	testenv.Until(t, "the joining", func() bool { p, _ := col.Store().Pair(ctx, tr.CommandID); return p.State == store.PairJoining })
	target.c.Close()
	p = pairEnded(t, col, tr.CommandID)
	if p.State != store.PairFailed || p.Reason != "the target lab/pi3 went offline (offline) before its watch ended" {
		t.Errorf("pair %+v", p)
	}

	if rows, err := col.Store().Runs(ctx, store.Filter{}); err != nil || len(rows) != 0 {
		t.Errorf("%d results stored (%v), want none", len(rows), err)
	}
}
