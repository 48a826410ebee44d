package store_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/seriesdb"
	"github.com/edgebench/edgebench/collector/store/sqldb"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/wire"
)

// newPair records a pair of laptop loading pi-3 of fleet lab, with its
// load and watch sent, as the collector does.
func newPair(t *testing.T, s *store.Store, deadline time.Time) *store.Pair {
	t.Helper()
	ctx := context.Background()
	p := &store.Pair{ID: wire.NewID(), WatchID: wire.NewID(), Fleet: "lab", Loader: "laptop", TargetFleet: "lab", Target: "pi-3",
		Kind: string(wire.KindLoadTest), State: store.PairWatching, Deadline: deadline}
	if err := s.AddPair(ctx, p, `{"device":"laptop"}`); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ id, device string }{{p.ID, "laptop"}, {p.WatchID, "pi-3"}} {
		cmd := &wire.Command{V: wire.SchemaVersion, ID: c.id, Kind: wire.KindLoadTest}
		if err := s.AddCommand(ctx, "lab", c.device, cmd, []byte{0x80}); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// TestPairStoredWholeOrNotAtAll: the results of a run across two devices
// are kept apart, never as results of their own; the joined result is
// stored with the pair's end in one transaction, once, under the target;
// a pair that ended otherwise stores nothing.
func TestPairStoredWholeOrNotAtAll(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		rng := rand.New(rand.NewPCG(3, 0))
		now := time.Now()
		p := newPair(t, s, now.Add(time.Hour))

		// Which result is whose: the load's is the loader's part, the
		// watch's the target's; a command of no pair none; a command
		// not sent to the device is not sent.
		for _, c := range []struct {
			cmd, device    string
			sent           bool
			pair, wantRole string
		}{
			{p.ID, "laptop", true, p.ID, store.RoleLoader},
			{p.WatchID, "pi-3", true, p.ID, store.RoleTarget},
			{p.ID, "pi-3", false, "", ""},
			{p.WatchID, "laptop", false, "", ""},
		} {
			sent, pair, role, err := s.CommandSentToPair(ctx, c.cmd, "lab", c.device)
			if err != nil || sent != c.sent || pair != c.pair || role != c.wantRole {
				t.Errorf("%s to %s: sent %v pair %q role %q (%v); want %v %q %q", c.cmd, c.device, sent, pair, role, err, c.sent, c.pair, c.wantRole)
			}
		}
		other := &wire.Command{V: wire.SchemaVersion, ID: wire.NewID(), Kind: wire.KindLoadTest}
		if err := s.AddCommand(ctx, "lab", "pi-1", other, []byte{0x80}); err != nil {
			t.Fatal(err)
		}
		if sent, pair, role, err := s.CommandSentToPair(ctx, other.ID, "lab", "pi-1"); err != nil || !sent || pair != "" || role != "" {
			t.Errorf("a command of no pair: sent %v pair %q role %q (%v)", sent, pair, role, err)
		}
		for _, id := range []string{p.ID, p.WatchID} {
			if got, err := s.Pair(ctx, id); err != nil || got.ID != p.ID || got.Target != "pi-3" || got.State != store.PairWatching {
				t.Errorf("pair of %s: %+v %v", id, got, err)
			}
		}
		if _, err := s.Pair(ctx, other.ID); !errors.Is(err, sqldb.ErrNotFound) {
			t.Errorf("pair of a command of no pair: %v", err)
		}

		// The parts: kept once each, in the order received; none is a
		// result.
		load := storetest.FakeResult(rng, "lab", "laptop", nil, now, 1000, 800)
		load.CommandID = p.ID
		watch := storetest.FakeResult(rng, "lab", "pi-3", nil, now, 0, 0)
		watch.CommandID, watch.Kind = p.WatchID, wire.KindProbe
		for i, in := range []store.Incoming{storetest.Incoming(t, load), storetest.Incoming(t, watch), storetest.Incoming(t, load)} {
			in.Received = now.Add(time.Duration(i) * time.Millisecond)
			role := store.RoleLoader
			if in.Result == watch {
				role = store.RoleTarget
			}
			fresh, err := s.AddPairPart(ctx, p.ID, role, in)
			if err != nil || fresh != (i < 2) {
				t.Errorf("part %d: new %v (%v), want %v", i, fresh, err, i < 2)
			}
		}
		parts, err := s.PairParts(ctx, p.ID)
		if err != nil || len(parts) != 2 || parts[0].Role != store.RoleLoader || parts[0].Result.ID != load.ID ||
			parts[1].Role != store.RoleTarget || parts[1].Result.ID != watch.ID {
			t.Fatalf("parts %+v %v", parts, err)
		}
		if n, _, err := s.CountResults(ctx); err != nil || n != 0 {
			t.Errorf("%d results stored from the parts (%v), want none", n, err)
		}

		// The joined result: the target's, with its loader; stored with
		// the pair's end, once.
		joined := *load
		joined.ID, joined.Device, joined.Loader = watch.ID, "pi-3", &wire.Loader{Fleet: "lab", Device: "laptop", ResultID: load.ID, WatchID: p.WatchID}
		if ok, err := s.FinishPair(ctx, p.ID, storetest.Incoming(t, &joined)); err != nil || !ok {
			t.Fatalf("finish: %v %v", ok, err)
		}
		if ok, err := s.FinishPair(ctx, p.ID, storetest.Incoming(t, &joined)); err != nil || ok {
			t.Errorf("finished twice: %v %v", ok, err)
		}
		if ok, err := s.SetPairState(ctx, p.ID, store.PairFailed, "late"); err != nil || ok {
			t.Errorf("an ended pair failed: %v %v", ok, err)
		}
		got, err := s.Pair(ctx, p.ID)
		if err != nil || got.State != store.PairSucceeded || got.ResultID != watch.ID || got.Reason != "" {
			t.Errorf("pair after its join: %+v %v", got, err)
		}
		rows, err := s.Runs(ctx, store.Filter{Command: p.ID})
		if err != nil || len(rows) != 1 || rows[0].Device != "pi-3" || rows[0].Loader != "lab/laptop" || rows[0].ID != watch.ID {
			t.Errorf("the joined result listed as %+v (%v): want one, pi-3's, loaded by lab/laptop", rows, err)
		}

		// A pair that failed stores nothing, whatever comes after.
		q := newPair(t, s, now.Add(time.Hour))
		if ok, err := s.SetPairState(ctx, q.ID, store.PairFailed, "the target lab/pi-3 went offline (lost)"); err != nil || !ok {
			t.Fatalf("fail: %v %v", ok, err)
		}
		late := *load
		late.ID, late.Device, late.CommandID = wire.NewID(), "pi-3", q.ID
		late.Loader = joined.Loader
		if ok, err := s.FinishPair(ctx, q.ID, storetest.Incoming(t, &late)); err != nil || ok {
			t.Errorf("a failed pair joined: %v %v", ok, err)
		}
		if rows, err := s.Runs(ctx, store.Filter{Command: q.ID}); err != nil || len(rows) != 0 {
			t.Errorf("a failed pair left %d results (%v)", len(rows), err)
		}
		if ok, err := s.CancelPair(ctx, q.ID); err != nil || ok {
			t.Errorf("an ended pair cancelled: %v %v", ok, err)
		}

		// Overdue: a pair not ended by its deadline fails, once; one
		// whose deadline is ahead stays.
		r := newPair(t, s, now.Add(-time.Second))
		ahead := newPair(t, s, now.Add(time.Hour))
		if ok, err := s.CancelPair(ctx, ahead.ID); err != nil || !ok {
			t.Errorf("cancel: %v %v", ok, err)
		}
		over, err := s.FailOverduePairs(ctx, now, "no collector ended it")
		if err != nil || len(over) != 1 || over[0].ID != r.ID || over[0].State != store.PairFailed || over[0].Reason != "no collector ended it" {
			t.Errorf("overdue: %+v %v", over, err)
		}
		if over, err := s.FailOverduePairs(ctx, now, "again"); err != nil || len(over) != 0 {
			t.Errorf("overdue again: %+v %v", over, err)
		}
		if got, err := s.Pair(ctx, ahead.ID); err != nil || got.State != store.PairWatching || !got.Cancel {
			t.Errorf("the pair ahead: %+v %v", got, err)
		}

		// Retention: pairs and their parts go with the rest.
		pr, err := s.Prune(ctx, time.Now().Add(time.Minute))
		if err != nil || pr.Pairs != 4 {
			t.Errorf("pruned %+v (%v), want 4 pairs", pr, err)
		}
		if parts, err := s.PairParts(ctx, p.ID); err != nil || len(parts) != 0 {
			t.Errorf("parts after the pruning: %d (%v)", len(parts), err)
		}
	})
}

// TestWindowEventsKept: a loader's window event keeps its edge in the
// store, for the collector that relays it; other events have none.
func TestWindowEventsKept(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		id := wire.NewID()
		at := time.Now().UTC()
		// A command's events are those of the devices it was sent to.
		cmd := &wire.Command{V: 1, ID: id, Kind: wire.KindLoadTest, IssuedAt: at, ExpiresAt: at.Add(time.Minute)}
		if err := s.AddCommand(ctx, "lab", "laptop", cmd, []byte{0x80}); err != nil {
			t.Fatal(err)
		}
		for i, ev := range []*wire.Event{
			{CommandID: id, Seq: 1, State: wire.StateRunning, At: at},
			{CommandID: id, Seq: 2, State: wire.StateRunning, At: at, Window: &wire.WindowEdge{Edge: wire.MarkStart, Run: 0}},
			{CommandID: id, Seq: 3, State: wire.StateRunning, At: at, Window: &wire.WindowEdge{Edge: wire.MarkEnd, Run: 12}},
		} {
			if err := s.AddEvent(ctx, "lab", "laptop", ev); err != nil {
				t.Fatalf("event %d: %v", i, err)
			}
		}
		evs, err := s.Events(ctx, id)
		if err != nil || len(evs) != 3 {
			t.Fatalf("events %+v %v", evs, err)
		}
		if evs[0].Window != nil || *evs[1].Window != (wire.WindowEdge{Edge: "start", Run: 0}) || *evs[2].Window != (wire.WindowEdge{Edge: "end", Run: 12}) {
			t.Errorf("windows %v %v %v", evs[0].Window, evs[1].Window, evs[2].Window)
		}
	})
}

// TestGroupRunsByLoader: a joined result is its target's for --by device,
// its loader's for --by loader, and another spec than the same URL loaded
// on the target itself (machines).
func TestGroupRunsByLoader(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		rng := rand.New(rand.NewPCG(5, 0))
		now := time.Now()
		local := storetest.FakeResult(rng, "lab", "pi-3", nil, now, 1000, 800)
		joined := storetest.FakeResult(rng, "lab", "pi-3", nil, now.Add(time.Second), 1500, 600)
		joined.Spec = local.Spec
		joined.Loader = &wire.Loader{Fleet: "lab", Device: "laptop", ResultID: wire.NewID(), WatchID: wire.NewID()}
		if _, err := s.Ingest(ctx, []store.Incoming{storetest.Incoming(t, local), storetest.Incoming(t, joined)}); err != nil {
			t.Fatal(err)
		}
		for by, want := range map[string][2]string{"device": {"lab/pi-3", "lab/pi-3"}, "loader": {"-", "lab/laptop"}, "machines": {"one device", "two devices"}} {
			runs, err := s.GroupRuns(ctx, by, store.Filter{})
			if err != nil || len(runs) != 2 {
				t.Fatalf("by %s: %+v %v", by, runs, err)
			}
			got := map[string]string{}
			for _, r := range runs {
				got[r.ResultID] = r.Group
				if r.Spec.TwoMachines != (r.ResultID == joined.ID) {
					t.Errorf("by %s: %s's spec says two machines %v", by, r.ResultID, r.Spec.TwoMachines)
				}
			}
			if got[local.ID] != want[0] || got[joined.ID] != want[1] {
				t.Errorf("by %s: local %q, joined %q; want %q", by, got[local.ID], got[joined.ID], want)
			}
		}
		// Two series, as compare has two specs: the joined result never
		// pools with the local one in changes and /metrics; the ingest's
		// keys are the rebuild's.
		seriesKeys := func() []string {
			t.Helper()
			ls, total, err := s.Latest(ctx, time.Time{}, 10)
			if err != nil || total != 2 {
				t.Fatalf("%d series (%v), want 2: %+v", total, err, ls)
			}
			var keys []string
			for _, l := range ls {
				keys = append(keys, l.Key)
			}
			slices.Sort(keys)
			return keys
		}
		keys := seriesKeys()
		if strings.Contains(keys[0], "another device") || !strings.Contains(keys[1], "loaded from another device") {
			t.Errorf("series %q: want the local one and the joined one apart", keys)
		}
		if _, err := s.RebuildSeries(ctx, seriesdb.RebuildOptions{}, nil); err != nil {
			t.Fatal(err)
		}
		if again := seriesKeys(); !slices.Equal(again, keys) {
			t.Errorf("series rebuilt %q, at ingest %q", again, keys)
		}
	})
}
