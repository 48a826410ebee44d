package store_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/compare"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/sqldb"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/wire"
)

func TestIngestIdempotentAndDurable(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		path := e.DB(t)
		s, err := store.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 1))
		now := time.Now()
		a := storetest.Incoming(t, storetest.FakeResult(rng, "lab", "pi-1", map[string]string{"server": "nginx"}, now, 1000, 800))
		b := storetest.Incoming(t, storetest.FakeResult(rng, "lab", "pi-2", nil, now, 900, 900))
		fresh, err := s.Ingest(ctx, []store.Incoming{a, b, a})
		if err != nil {
			t.Fatal(err)
		}
		if !fresh[0] || !fresh[1] || fresh[2] {
			t.Fatalf("fresh = %v, want [true true false]", fresh)
		}
		fresh, err = s.Ingest(ctx, []store.Incoming{b})
		if err != nil || fresh[0] {
			t.Fatalf("second ingest of b: %v %v", fresh, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}

		// Reopen: the schema is not reapplied, nothing is lost or doubled.
		s, err = store.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		nres, nruns, err := s.CountResults(ctx)
		if err != nil || nres != 2 || nruns != 2 {
			t.Fatalf("after reopen: %d results %d runs %v", nres, nruns, err)
		}
		fresh, err = s.Ingest(ctx, []store.Incoming{a})
		if err != nil || fresh[0] {
			t.Fatalf("ingest after reopen: %v %v", fresh, err)
		}

		got, err := s.Result(ctx, a.Result.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != a.Result.ID || got.Labels["server"] != "nginx" || len(got.Runs) != 1 {
			t.Errorf("stored result %+v", got)
		}
		if _, err := s.Result(ctx, "01NOPE"); !errors.Is(err, sqldb.ErrNotFound) {
			t.Errorf("missing result: %v", err)
		}
		// ULIDs of one millisecond share most of their letters: the
		// shortest prefix of a that is not b's.
		n := 1
		for strings.HasPrefix(b.Result.ID, a.Result.ID[:n]) {
			n++
		}
		id, err := s.ResultIDPrefix(ctx, a.Result.ID[:n])
		if err != nil || id != a.Result.ID {
			t.Errorf("prefix: %q %v", id, err)
		}

		runs, err := s.Runs(ctx, store.Filter{Labels: map[string]string{"server": "nginx"}})
		if err != nil || len(runs) != 1 {
			t.Fatalf("runs: %v %v", runs, err)
		}
		r := runs[0]
		if math.Abs(r.RPS-1000) > 0.01 || r.Timeouts != 3 || r.Errors != 3 || math.Abs(r.CPUPct-35) > 0.01 || r.IOKBs != 42 || r.MemKB != 300000 {
			t.Errorf("figures %+v", r)
		}
		if r.P50US < 700 || r.P50US > 900 || r.P99US < r.P50US || r.MaxUS < r.P99US {
			t.Errorf("latency figures %+v", r)
		}

		devs, err := s.Devices(ctx)
		if err != nil || len(devs) != 2 || devs[0].LastResult != a.Result.ID {
			t.Fatalf("devices %+v %v", devs, err)
		}
	})
}

func TestIngestAbsentFigures(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		r := &wire.Result{V: 1, ID: wire.NewID(), Fleet: "lab", Device: "bare", CreatedAt: time.Now(), Outcome: wire.StateSucceeded,
			Runs: []wire.Run{{StartedAt: time.Now(), DurationUS: 1e6, Completed: 10}}}
		if _, err := s.Ingest(ctx, []store.Incoming{storetest.Incoming(t, r)}); err != nil {
			t.Fatal(err)
		}
		runs, err := s.Runs(ctx, store.Filter{Device: "bare"})
		if err != nil || len(runs) != 1 {
			t.Fatal(runs, err)
		}
		if !math.IsNaN(runs[0].CPUPct) || !math.IsNaN(runs[0].P50US) || runs[0].RPS != 10 {
			t.Errorf("absent figures should be NaN: %+v", runs[0])
		}
	})
}

func TestStatusStaleWillIgnored(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		info := &wire.DeviceInfo{Board: "Raspberry Pi 4", Labels: map[string]string{"site": "attic"}}
		steps := []struct {
			st      wire.Status
			applied bool
			online  bool
		}{
			{wire.Status{V: 1, State: wire.StatusOnline, BootID: "b1", ConnSeq: 1, Info: info}, true, true},
			{wire.Status{V: 1, State: wire.StatusOnline, BootID: "b1", ConnSeq: 2, Info: info}, true, true},
			{wire.Status{V: 1, State: wire.StatusLost, BootID: "b1", ConnSeq: 1}, false, true}, // stale will
			{wire.Status{V: 1, State: wire.StatusLost, BootID: "b1", ConnSeq: 2}, true, false},
			{wire.Status{V: 1, State: wire.StatusOnline, BootID: "b2", ConnSeq: 1, Info: info}, true, true},
		}
		for i, st := range steps {
			applied, err := s.SetStatus(ctx, "lab", "pi-1", &st.st)
			if err != nil {
				t.Fatal(err)
			}
			devs, err := s.Devices(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if applied != st.applied || devs[0].Online != st.online {
				t.Errorf("step %d: applied %v online %v, want %v %v", i, applied, devs[0].Online, st.applied, st.online)
			}
			if devs[0].Info == nil || devs[0].Labels["site"] != "attic" {
				t.Errorf("step %d: info lost: %+v", i, devs[0])
			}
		}
		d, _ := s.Devices(ctx)
		if v, ok := d[0].Field("board"); !ok || v != "Raspberry Pi 4" {
			t.Errorf("Field(board) = %q %v", v, ok)
		}
		if v, ok := d[0].Field("site"); !ok || v != "attic" {
			t.Errorf("Field(site) = %q %v", v, ok)
		}
	})
}

// TestStatusInAnyOrder: the statuses of one boot of a device, two
// connections' births and wills, each delivered twice (two collectors
// write them), leave the same device whatever their order: the latest
// connection, ended.
func TestStatusInAnyOrder(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		info := &wire.DeviceInfo{Board: "Raspberry Pi 4"}
		msgs := []wire.Status{
			{V: 1, State: wire.StatusOnline, BootID: "b1", ConnSeq: 1, Info: info},
			{V: 1, State: wire.StatusLost, BootID: "b1", ConnSeq: 1},
			{V: 1, State: wire.StatusOnline, BootID: "b1", ConnSeq: 2, Info: info},
			{V: 1, State: wire.StatusLost, BootID: "b1", ConnSeq: 2},
		}
		n := 0
		var permute func(k int)
		permute = func(k int) {
			if k == len(msgs) {
				n++
				dev := fmt.Sprintf("pi-%d", n)
				for _, m := range append(slices.Clone(msgs), msgs...) {
					if _, err := s.SetStatus(ctx, "lab", dev, &m); err != nil {
						t.Fatal(err)
					}
				}
				return
			}
			for i := k; i < len(msgs); i++ {
				msgs[k], msgs[i] = msgs[i], msgs[k]
				permute(k + 1)
				msgs[k], msgs[i] = msgs[i], msgs[k]
			}
		}
		permute(0)
		devs, err := s.Devices(ctx)
		if err != nil || len(devs) != n {
			t.Fatalf("%d devices, want %d: %v", len(devs), n, err)
		}
		for _, d := range devs {
			if d.Online || d.State != string(wire.StatusLost) || d.ConnSeq != 2 || d.Info == nil {
				t.Errorf("%s: online %v state %s conn_seq %d info %v; want the second connection, lost", d.ID, d.Online, d.State, d.ConnSeq, d.Info)
			}
		}
	})
}

// TestHeartbeatsNewestWins: a heartbeat older than the one stored (another
// collector wrote a newer one first) does not replace it.
func TestHeartbeatsNewestWins(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		a := wire.Addr{Fleet: "lab", Device: "pi-1"}
		at := time.Now().UTC()
		newer := &wire.Heartbeat{V: 1, At: at, UptimeS: 61, Busy: true, CommandID: "C2"}
		older := &wire.Heartbeat{V: 1, At: at.Add(-time.Second), UptimeS: 60}
		for _, hb := range []*wire.Heartbeat{newer, older, newer} {
			if err := s.SetHeartbeats(ctx, map[wire.Addr]*wire.Heartbeat{a: hb}); err != nil {
				t.Fatal(err)
			}
			devs, err := s.Devices(ctx)
			if err != nil || len(devs) != 1 {
				t.Fatal(devs, err)
			}
			if d := devs[0]; d.Heartbeat == nil || d.Heartbeat.UptimeS != 61 || d.BusyCommand != "C2" {
				t.Errorf("after the heartbeat of uptime %d: %+v busy %q, want the newer one's", hb.UptimeS, d.Heartbeat, d.BusyCommand)
			}
		}
	})
}

func TestEventsAndCommands(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		cmd := &wire.Command{V: 1, ID: wire.NewID(), IssuedAt: time.Now(), ExpiresAt: time.Now().Add(time.Minute), Kind: wire.KindLoadTest}
		if err := s.AddCommand(ctx, "lab", "_all", cmd, []byte{0x80}); err != nil {
			t.Fatal(err)
		}
		for _, ev := range []wire.Event{
			{V: 1, CommandID: cmd.ID, Seq: 1, State: wire.StateAccepted, At: time.Now()},
			{V: 1, CommandID: cmd.ID, Seq: 2, State: wire.StateRunning, Progress: &wire.Progress{ElapsedMS: 1000, Completed: 900, RPS: 900}, At: time.Now()},
			{V: 1, CommandID: cmd.ID, Seq: 2, State: wire.StateRunning, At: time.Now()}, // redelivered
			{V: 1, CommandID: cmd.ID, Seq: 3, State: wire.StateSucceeded, ResultID: "R1", At: time.Now()},
		} {
			if err := s.AddEvent(ctx, "lab", "pi-1", &ev); err != nil {
				t.Fatal(err)
			}
		}
		evs, err := s.Events(ctx, cmd.ID)
		if err != nil || len(evs) != 3 || evs[1].Progress == nil || evs[1].Progress.Completed != 900 || evs[2].ResultID != "R1" {
			t.Fatalf("events %+v %v", evs, err)
		}
	})
}

func TestConcurrentIngestAndRead(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for w := range 4 {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(w), 9))
				for range 10 {
					var batch []store.Incoming
					for range 5 {
						batch = append(batch, storetest.Incoming(t, storetest.FakeResult(rng, "lab", "pi-1", nil, time.Now(), 100, 500)))
					}
					if _, err := s.Ingest(ctx, batch); err != nil {
						errs <- err
						return
					}
					if _, err := s.Runs(ctx, store.Filter{Limit: 5}); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if n, _, err := s.CountResults(ctx); err != nil || n != 200 {
			t.Fatalf("%d results, %v", n, err)
		}
	})
}

func TestGroupRuns(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		storetest.SeedCompare(t, s)
		for _, tc := range []struct {
			by     string
			groups map[string]int
		}{
			{"server", map[string]int{"nginx": 10, "kangle": 10}},
			{"device", map[string]int{"lab/pi-1": 10, "lab/pi-2": 10}},
			{"board", map[string]int{"Raspberry Pi 4 Model B Rev 1.4": 20}},
			{"build", map[string]int{"-": 20}},
		} {
			runs, err := s.GroupRuns(ctx, tc.by, store.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			for _, r := range runs {
				got[r.Group]++
			}
			if len(got) != len(tc.groups) {
				t.Errorf("by %s: %v", tc.by, got)
			}
			for k, n := range tc.groups {
				if got[k] != n {
					t.Errorf("by %s: %v, want %v", tc.by, got, tc.groups)
				}
			}
		}
	})
}

// BenchmarkHeartbeats: 1,000 devices' heartbeats, one transaction each
// (as a heartbeat was written before) against one for all.
func BenchmarkHeartbeats(b *testing.B) {
	ctx := context.Background()
	hbs := map[wire.Addr]*wire.Heartbeat{}
	for i := range 1000 {
		hbs[wire.Addr{Fleet: "lab", Device: fmt.Sprintf("pi-%04d", i)}] = &wire.Heartbeat{V: wire.SchemaVersion, At: time.Now().UTC(), UptimeS: 60}
	}
	b.Run("one-each", func(b *testing.B) {
		s := storetest.OpenSQLite(b)
		for b.Loop() {
			for a, hb := range hbs {
				if err := s.SetHeartbeats(ctx, map[wire.Addr]*wire.Heartbeat{a: hb}); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("batched", func(b *testing.B) {
		s := storetest.OpenSQLite(b)
		for b.Loop() {
			if err := s.SetHeartbeats(ctx, hbs); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestIngestWhatADeviceMaySend: text with NUL and bytes that are not
// UTF-8, and counts beyond 32 bits, are stored by both engines (PostgreSQL
// refuses such text and 32-bit overflows: one result would fail its whole
// batch), and the reads and comparisons by label go on.
func TestIngestWhatADeviceMaySend(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		const bad = "a\x00b\xffc"
		r := storetest.FakeResult(rand.New(rand.NewPCG(3, 3)), "lab", "pi-1", map[string]string{"server": bad, bad: "x"}, time.Now(), 1000, 800)
		r.Reason, r.CommandID = bad, bad
		r.Spec.URL, r.Spec.Connections = "http://127.0.0.1/"+bad, 1<<40
		r.Fingerprint.Board, r.Fingerprint.Cores, r.Fingerprint.Server = bad, 1<<40, bad
		good := storetest.FakeResult(rand.New(rand.NewPCG(4, 4)), "lab", "pi-2", map[string]string{"server": "nginx"}, time.Now(), 1000, 800)
		if _, err := s.Ingest(ctx, []store.Incoming{storetest.Incoming(t, r), storetest.Incoming(t, good)}); err != nil {
			t.Fatal(err)
		}
		info := &wire.DeviceInfo{Board: bad, Labels: map[string]string{bad: bad}}
		if _, err := s.SetStatus(ctx, "lab", "pi-1", &wire.Status{V: 1, State: wire.StatusOnline, BootID: bad, ConnSeq: 1 << 63, Info: info}); err != nil {
			t.Fatal(err)
		}
		if err := s.AddEvent(ctx, "lab", "pi-1", &wire.Event{V: 1, CommandID: bad, Seq: 1, State: wire.StateFailed, Reason: bad, At: time.Now()}); err != nil {
			t.Fatal(err)
		}
		runs, err := s.Runs(ctx, store.Filter{})
		if err != nil || len(runs) != 2 {
			t.Fatalf("runs %v %v", runs, err)
		}
		if got, err := s.Result(ctx, r.ID); err != nil || got.Reason != bad {
			t.Errorf("the payload changed: %q %v", got.Reason, err)
		}
		for _, by := range []string{"server", "board", "cores", bad} {
			if _, err := s.GroupRuns(ctx, by, store.Filter{}); err != nil {
				t.Errorf("group by %q: %v", by, err)
			}
		}
		if rows, err := s.Runs(ctx, store.Filter{Labels: map[string]string{"server": "nginx"}}); err != nil || len(rows) != 1 {
			t.Errorf("runs by label: %v %v", rows, err)
		}
		if _, err := s.Runs(ctx, store.Filter{Labels: map[string]string{bad: bad}, Device: bad}); err != nil {
			t.Errorf("a filter of such text: %v", err)
		}
		if _, err := s.ResultIDPrefix(ctx, bad); !errors.Is(err, sqldb.ErrNotFound) {
			t.Errorf("prefix of such text: %v", err)
		}
		if devs, err := s.Devices(ctx); err != nil || len(devs) != 2 {
			t.Errorf("devices %+v %v", devs, err)
		}
		if _, err := compare.Runs(ctx, s, compare.Options{By: "server"}); err != nil {
			t.Errorf("compare: %v", err)
		}
	})
}
