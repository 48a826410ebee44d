package store_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/compare"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/retention"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/wire"
)

// TestPrune: results that started before the cutoff go with their runs
// and specs, and so do older commands and events; the newer stay and read
// as before.
func TestPrune(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		rng := rand.New(rand.NewPCG(8, 8))
		now := time.Now()
		var batch []store.Incoming
		var recent []string
		for i := range 2*store.PruneChunk + 7 { // three transactions of old ones
			at := now.Add(-200*24*time.Hour + time.Duration(i)*time.Second)
			r := storetest.FakeResult(rng, "lab", "pi-1", map[string]string{"server": "nginx"}, at, 1000, 800)
			in := storetest.Incoming(t, r)
			in.Received = at
			batch = append(batch, in)
		}
		for i := range 3 {
			at := now.Add(-time.Duration(i) * time.Hour)
			r := storetest.FakeResult(rng, "lab", "pi-1", map[string]string{"server": "nginx"}, at, 1000, 800)
			in := storetest.Incoming(t, r)
			in.Received = at
			batch = append(batch, in)
			recent = append(recent, r.ID)
		}
		if _, err := s.Ingest(ctx, batch); err != nil {
			t.Fatal(err)
		}
		var cmds []string
		for i, at := range []time.Time{now.Add(-300 * 24 * time.Hour), now} {
			cmd := &wire.Command{V: 1, ID: wire.NewID(), IssuedAt: at, ExpiresAt: at.Add(time.Minute), Kind: wire.KindLoadTest}
			cmds = append(cmds, cmd.ID)
			if err := s.AddCommand(ctx, "lab", "pi-1", cmd, []byte{0x80}); err != nil {
				t.Fatal(err)
			}
			if err := s.AddEvent(ctx, "lab", "pi-1", &wire.Event{V: 1, CommandID: cmd.ID, Seq: uint32(i + 1), State: wire.StateAccepted, At: at}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.W().ExecContext(ctx, s.Q("UPDATE events SET received = ? WHERE command_id = ?"), at.UnixNano(), cmd.ID); err != nil {
				t.Fatal(err)
			}
		}
		p, err := s.Prune(ctx, now.Add(-180*24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		want := retention.Pruned{Results: 2*store.PruneChunk + 7, Commands: 1, Events: 1, Samples: 2*store.PruneChunk + 7}
		if e != storetest.SQLite {
			want.SampleDays = 1 // the old ones were received within a second of each other
		}
		if p != want {
			t.Errorf("pruned %+v, want %+v", p, want)
		}
		// The command kept keeps its targets: its device's results and
		// events are still taken (CommandSentTo), the pruned one's not.
		for i, want := range []bool{false, true} {
			if ok, err := s.CommandSentTo(ctx, cmds[i], "lab", "pi-1"); err != nil || ok != want {
				t.Errorf("command %d sent to lab/pi-1 after pruning: %v %v, want %v", i, ok, err, want)
			}
		}
		nres, nruns, err := s.CountResults(ctx)
		if err != nil || nres != 3 || nruns != 3 {
			t.Errorf("left %d results, %d runs (%v), want 3 each", nres, nruns, err)
		}
		var specs int
		if err := s.R().QueryRowContext(ctx, "SELECT count(*) FROM result_specs").Scan(&specs); err != nil || specs != 3 {
			t.Errorf("left %d specs (%v), want 3", specs, err)
		}
		rows, err := s.Runs(ctx, store.Filter{})
		if err != nil || len(rows) != 3 || rows[0].ID != recent[0] {
			t.Errorf("runs after pruning: %v %v", rows, err)
		}
		if _, err := compare.Runs(ctx, s, compare.Options{By: "server"}); err != nil {
			t.Error(err)
		}
		if p, err := s.Prune(ctx, now.Add(-180*24*time.Hour)); err != nil || p != (retention.Pruned{}) {
			t.Errorf("pruning again: %+v %v", p, err)
		}
	})
}

// TestReceiveTimeDecides: a device's clock decides neither what the pages
// list first nor what is pruned. Results stamped in 2096 and in 2021,
// received a year ago, are listed after the ones received since and
// pruned with a 180-day keep; one stamped an hour ago but received now is
// the newest and stays; the device's own times are kept as it said.
func TestReceiveTimeDecides(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		rng := rand.New(rand.NewPCG(5, 5))
		now := time.Now()
		future := storetest.FakeResult(rng, "lab", "liar", nil, time.Date(2096, 1, 1, 0, 0, 0, 0, time.UTC), 1000, 800)
		past := storetest.FakeResult(rng, "lab", "liar", nil, time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC), 1000, 800)
		var honest []string
		var batch []store.Incoming
		for _, r := range []*wire.Result{future, past} {
			in := storetest.Incoming(t, r)
			in.Received = now.Add(-365 * 24 * time.Hour)
			batch = append(batch, in)
		}
		for i := range 3 {
			r := storetest.FakeResult(rng, "lab", "pi-1", nil, now.Add(-time.Duration(3-i)*time.Hour), 1000, 800)
			in := storetest.Incoming(t, r)
			in.Received = now.Add(-time.Duration(3-i) * time.Minute)
			batch = append(batch, in)
			honest = append([]string{r.ID}, honest...) // the last received first
		}
		if _, err := s.Ingest(ctx, batch); err != nil {
			t.Fatal(err)
		}
		rows, err := s.Runs(ctx, store.Filter{Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rows {
			got = append(got, r.ID)
		}
		if !slices.Equal(got, honest) {
			t.Errorf("the page's newest: %v, want %v (the liar's: %s, %s)", got, honest, future.ID, past.ID)
		}
		if rows, _ := s.Runs(ctx, store.Filter{Since: now.Add(-time.Hour)}); len(rows) != 3 {
			t.Errorf("received in the last hour: %d results, want 3", len(rows))
		}
		if id, err := s.ResultIDPrefix(ctx, "last"); err != nil || id != honest[0] {
			t.Errorf("last: %s %v, want %s", id, err, honest[0])
		}
		if r, err := s.Result(ctx, future.ID); err != nil || !r.CreatedAt.Equal(future.CreatedAt) {
			t.Errorf("the device's time not kept: %v %v", r, err)
		}
		devs, err := s.Devices(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range devs {
			if d.ID == "pi-1" && d.LastResult != honest[0] {
				t.Errorf("pi-1's last result %s, want %s", d.LastResult, honest[0])
			}
		}
		p, err := s.Prune(ctx, now.Add(-180*24*time.Hour))
		if err != nil || p.Results != 2 {
			t.Errorf("pruned %+v %v, want the liar's 2", p, err)
		}
		if n, _, _ := s.CountResults(ctx); n != 3 {
			t.Errorf("%d left, want 3", n)
		}
	})
}
