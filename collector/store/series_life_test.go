package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/seriesdb"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/wire"
)

// The series state through a store's life: a restart, a prune, two
// collectors writing at once.

// genFleet makes the results of devices devices x two servers, about n
// each, in the order they started.
func genFleet(rng *rand.Rand, devices, n int) []*wire.Result {
	start := time.Now().Add(-30 * 24 * time.Hour).Truncate(time.Hour)
	var all []*wire.Result
	for d := range devices {
		for _, srv := range []string{"nginx", "kangle"} {
			all = append(all, genSeries(rng, "lab", fmt.Sprintf("pi-%d", d), map[string]string{"server": srv},
				start.Add(time.Duration(d)*time.Minute), n-10+rng.IntN(20), 500+rng.Float64()*3000, []float64{0.01, 0.03}[rng.IntN(2)])...)
		}
	}
	slices.SortFunc(all, func(a, b *wire.Result) int { return a.Runs[0].StartedAt.Compare(b.Runs[0].StartedAt) })
	return all
}

// ingestAll ingests rs in batches of 1 to 30.
func ingestAll(t *testing.T, rng *rand.Rand, s *store.Store, rs []*wire.Result) {
	t.Helper()
	for len(rs) > 0 {
		n := min(len(rs), 1+rng.IntN(30))
		var batch []store.Incoming
		for _, r := range rs[:n] {
			batch = append(batch, storetest.Incoming(t, r))
		}
		if _, err := s.Ingest(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
		rs = rs[n:]
	}
}

// seriesOf reads every series' row of the store, by key.
func seriesRows(t *testing.T, s *store.Store) map[string]seriesdb.SeriesInfo {
	t.Helper()
	ctx := context.Background()
	out := map[string]seriesdb.SeriesInfo{}
	ls, _, err := s.Latest(ctx, time.Time{}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		in, err := s.Series(ctx, l.Key)
		if err != nil {
			t.Fatal(err)
		}
		out[l.Key] = in
	}
	return out
}

// TestSeriesStateAfterRestart: the store is closed halfway through every
// series' history and opened again on the same file or database; the
// rest of the history, and a result late by two hours just after the
// restart, arrive: the changes stored are the whole series detection's,
// those found before the restart kept as they were (not found again).
func TestSeriesStateAfterRestart(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(29, 2))
		all := genFleet(rng, 4, 110)
		half := len(all) / 2
		// The result that arrives late: two hours (24 results of the fleet) before the restart.
		all[half], all[half-24] = all[half-24], all[half]
		db := e.DB(t)
		s, err := store.Open(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		ingestAll(t, rng, s, all[:half])
		before, _ := storedChanges(t, s)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s, err = store.Open(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ingestAll(t, rng, s, all[half:])
		late := map[string]bool{}
		for k, in := range seriesRows(t, s) {
			if in.Late > 0 {
				late[k] = true
			}
		}
		if len(late) > 1 {
			t.Errorf("%d series with results too late: %v", len(late), late)
		}
		finals, provisional := checkAgainstWhole(t, s, late)
		after, _ := storedChanges(t, s)
		kept := 0
		for k, cs := range before {
			for i, c := range cs {
				if i >= len(after[k]) || after[k][i].Seq != c.Seq || !after[k][i].DetectedAt.Equal(c.DetectedAt) {
					t.Errorf("%s: the change %d found before the restart (seq %d) is not kept as it was", k, i, c.Seq)
					continue
				}
				kept++
			}
		}
		t.Logf("%d final changes (%d found before the restart) and %d provisional claims as the whole series", finals, kept, provisional)
		if kept < 5 || finals-kept < 5 {
			t.Errorf("%d changes found before the restart, %d after: too few to tell", kept, finals-kept)
		}
	})
}

// TestSeriesStateAfterPrune: pruning takes results and the changes found
// on them, never a series' state. Every result of the first half of the
// history is pruned (and the changes found on them, but the latest of
// each series and figure); the rest arrives: the series go on as if
// nothing was pruned. The store then holds the changes a store that
// pruned nothing holds (result for result, bit for bit, none twice),
// less those the prune took; its provisional claims, counts and the
// latest figures /metrics exports are that store's.
func TestSeriesStateAfterPrune(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(29, 3))
		all := genFleet(rng, 4, 110)
		half := len(all) / 2
		whole, pruned := e.Open(t), e.Open(t)
		ingestAll(t, rand.New(rand.NewPCG(1, 1)), whole, all)
		ingestAll(t, rand.New(rand.NewPCG(1, 1)), pruned, all[:half])
		latestBefore, _, err := pruned.Latest(ctx, time.Time{}, 1000)
		if err != nil {
			t.Fatal(err)
		}
		foundBefore, _ := storedChanges(t, pruned)
		cutoff := time.Now()
		time.Sleep(time.Millisecond) // what arrives next is after the cutoff on any clock
		p, err := pruned.Prune(ctx, cutoff)
		if err != nil {
			t.Fatal(err)
		}
		if p.Results != int64(half) || p.Changes == 0 {
			t.Fatalf("pruned %+v: want the %d results of the first half and some changes", p, half)
		}
		if l, _, err := pruned.Latest(ctx, time.Time{}, 1000); err != nil || !slices.Equal(l, latestBefore) {
			t.Errorf("the latest figures changed with the prune (%v):\n%v\n%v", err, l, latestBefore)
		}
		kept, _ := storedChanges(t, pruned)
		for k, cs := range foundBefore {
			if len(kept[k]) != 1 || kept[k][0].Seq != cs[len(cs)-1].Seq {
				t.Errorf("%s: %d changes kept of %d found, want the latest", k, len(kept[k]), len(cs))
			}
		}
		ingestAll(t, rand.New(rand.NewPCG(2, 2)), pruned, all[half:])

		wf, wp := storedChanges(t, whole)
		pf, pp := storedChanges(t, pruned)
		n, gone := 0, 0
		for k, w := range wf {
			got := pf[k]
			// The changes found before the prune, but its latest, are gone.
			skip := max(len(foundBefore[k])-1, 0)
			gone += skip
			if len(got) != len(w)-skip {
				t.Errorf("%s: %d changes stored after the prune, want %d of %d", k, len(got), len(w)-skip, len(w))
				continue
			}
			for i := range got {
				if why := sameChange(got[i], w[skip+i]); why != "" {
					t.Errorf("%s, change %d: %s:\npruned %+v\n whole %+v", k, i, why, got[i], w[skip+i])
				}
				n++
			}
		}
		for k := range pf {
			if wf[k] == nil {
				t.Errorf("%s: changes stored only with the prune: %v", k, pf[k])
			}
		}
		for k, w := range wp {
			if len(pp[k]) != len(w) {
				t.Errorf("%s: %d provisional claims, want %d", k, len(pp[k]), len(w))
				continue
			}
			for i := range w {
				if why := sameChange(pp[k][i], w[i]); why != "" {
					t.Errorf("%s, claim %d: %s", k, i, why)
				}
			}
		}
		wr, pr := seriesRows(t, whole), seriesRows(t, pruned)
		if len(wr) != 8 || len(pr) != len(wr) {
			t.Fatalf("%d series, %d with the prune", len(wr), len(pr))
		}
		for k, w := range wr {
			if p := pr[k]; p.Results != w.Results || p.LeftOut != w.LeftOut || p.Late != w.Late || p.LatestID != w.LatestID ||
				p.Values != w.Values || p.Points != w.Points {
				t.Errorf("%s: %+v with the prune, %+v without", k, p, w)
			}
		}
		wl, _, err := whole.Latest(ctx, time.Time{}, 1000)
		if err != nil {
			t.Fatal(err)
		}
		pl, _, err := pruned.Latest(ctx, time.Time{}, 1000)
		if err != nil {
			t.Fatal(err)
		}
		// By key: the order is each store's own receive times.
		byKey := func(a, b seriesdb.LatestSeries) int { return strings.Compare(a.Key, b.Key) }
		slices.SortFunc(wl, byKey)
		slices.SortFunc(pl, byKey)
		sameLatest := len(wl) == len(pl)
		for i := 0; sameLatest && i < len(wl); i++ {
			a, b := wl[i], pl[i]
			sameLatest = a.Key == b.Key && a.ResultID == b.ResultID && a.RPS == b.RPS && a.Server == b.Server &&
				a.Started.Equal(b.Started) && (a.P99US == b.P99US || a.P99US != a.P99US && b.P99US != b.P99US)
		}
		if !sameLatest {
			t.Errorf("the latest figures differ with the prune:\n%v\n%v", pl, wl)
		}
		t.Logf("%d changes as without the prune, %d pruned", n, gone)
		if n < 10 || gone < 5 {
			t.Errorf("%d changes compared, %d pruned: too few to tell", n, gone)
		}
	})
}

// TestSeriesStateTwoCollectors: two stores open on one database (two
// collectors) take a fleet's results at once, as a shared subscription
// hands them out: each result to one or the other, some to both (a
// redelivery), results of one device to both in the same moment. Two
// alert loops claim the changes as they are stored. Each change is
// stored once and is the whole series detection's; each is alerted
// once.
func TestSeriesStateTwoCollectors(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(29, 4))
		all := genFleet(rng, 4, 110)
		db := e.DB(t)
		var cols [2]*store.Store
		for i := range cols {
			s, err := store.Open(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			cols[i] = s
		}
		// The alert loops: each pass lists what is not alerted yet and
		// claims it (alerts.Alerter.changes).
		var mu sync.Mutex
		claimed := map[int64]int{}
		stop := make(chan struct{})
		var loops sync.WaitGroup
		claim := func(s *store.Store) error {
			cs, err := s.ChangesToAlert(ctx, 500)
			if err != nil {
				return err
			}
			for _, c := range cs {
				ok, err := s.ClaimChange(ctx, c.Seq, time.Now())
				if err != nil {
					return err
				}
				if ok {
					mu.Lock()
					claimed[c.Seq]++
					mu.Unlock()
				}
			}
			return nil
		}
		for _, s := range cols {
			loops.Add(1)
			go func() {
				defer loops.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					if err := claim(s); err != nil {
						t.Error(err)
						return
					}
					time.Sleep(time.Millisecond)
				}
			}()
		}
		// Each step hands out the next results: each to one collector or
		// both, the two collectors' batches ingested at once.
		both := 0
		for len(all) > 0 {
			n := min(len(all), 1+rng.IntN(24))
			var batches [2][]store.Incoming
			for _, r := range all[:n] {
				switch k := rng.IntN(5); k {
				case 0:
					both++
					batches[0] = append(batches[0], storetest.Incoming(t, r))
					batches[1] = append(batches[1], storetest.Incoming(t, r))
				default:
					batches[k%2] = append(batches[k%2], storetest.Incoming(t, r))
				}
			}
			all = all[n:]
			var wg sync.WaitGroup
			for i, s := range cols {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := s.Ingest(ctx, batches[i]); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			if t.Failed() {
				break
			}
		}
		close(stop)
		loops.Wait()
		for _, s := range cols { // what was stored after the loops' last pass
			if err := claim(s); err != nil {
				t.Fatal(err)
			}
		}
		late := map[string]bool{}
		rows := seriesRows(t, cols[0])
		for k, in := range rows {
			if in.Late > 0 {
				late[k] = true
			}
		}
		if len(rows) != 8 || len(late) > 2 {
			t.Errorf("%d series, %d with results too late: %v", len(rows), len(late), late)
		}
		finals, provisional := checkAgainstWhole(t, cols[1], late)
		final, _ := storedChanges(t, cols[0])
		stored := 0
		for _, cs := range final {
			for _, c := range cs {
				stored++
				if claimed[c.Seq] != 1 {
					t.Errorf("change %d (%s %s) alerted %d times", c.Seq, c.Series, c.Metric, claimed[c.Seq])
				}
			}
		}
		if len(claimed) != stored {
			t.Errorf("%d changes alerted, %d stored", len(claimed), stored)
		}
		t.Logf("%d results to both collectors; %d final changes and %d provisional claims as the whole series (%d series with one too late), each alerted once",
			both, finals, provisional, len(late))
		if finals < 10 {
			t.Errorf("only %d final changes: too few to tell", finals)
		}
	})
}

// TestSeriesCapPerDevice: a device that makes a new series with each
// result (a new label each time) has its last SeriesPerDevice received
// exported, never pushing out another device's; a series left out that
// gets a new result is exported again and the oldest exported one goes;
// the ones left out are counted.
func TestSeriesCapPerDevice(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		at := time.Now().Add(-time.Hour)
		received := at
		res := func(dev, build string) store.Incoming {
			at = at.Add(time.Second)
			in := storetest.Incoming(t, storetest.LightResult("lab", dev, map[string]string{"build": build},
				storetest.Point{At: at, RPS: 1000, P99US: 2000, CPUPct: 40}))
			received = received.Add(time.Second)
			in.Received = received
			return in
		}
		n := seriesdb.SeriesPerDevice + 8
		var batch []store.Incoming
		for i := range n {
			batch = append(batch, res("pi-1", fmt.Sprint(i)))
			if i%2 == 0 {
				batch = append(batch, res("pi-2", fmt.Sprint(i%4)))
			}
			if len(batch) >= 7 || i == n-1 {
				if _, err := s.Ingest(ctx, batch); err != nil {
					t.Fatal(err)
				}
				batch = nil
			}
		}
		exported := func() (map[string][]string, int64) {
			t.Helper()
			ls, _, err := s.Latest(ctx, time.Time{}, 1000)
			if err != nil {
				t.Fatal(err)
			}
			by := map[string][]string{}
			for _, l := range ls {
				by[l.Device] = append(by[l.Device], l.Key[strings.LastIndexByte(l.Key, '=')+1:])
			}
			ds, err := s.SeriesDropped(ctx, 10)
			if err != nil {
				t.Fatal(err)
			}
			var dropped int64
			for _, d := range ds {
				if d.Device != "pi-1" {
					t.Errorf("%s/%s had series left out", d.Fleet, d.Device)
				}
				dropped += d.N
			}
			return by, dropped
		}
		by, dropped := exported()
		if len(by["pi-1"]) != seriesdb.SeriesPerDevice || len(by["pi-2"]) != 2 || dropped != 8 {
			t.Fatalf("exported %d of pi-1 and %d of pi-2, %d left out: want %d, 2 and 8", len(by["pi-1"]), len(by["pi-2"]), dropped, seriesdb.SeriesPerDevice)
		}
		for _, b := range by["pi-1"] { // the last received
			if i, _ := strconv.Atoi(b); i < 8 {
				t.Errorf("build=%s exported, one of the first 8", b)
			}
		}
		// build=0 is back: exported again, build=8 (the oldest) out.
		if _, err := s.Ingest(ctx, []store.Incoming{res("pi-1", "0")}); err != nil {
			t.Fatal(err)
		}
		by, dropped = exported()
		if len(by["pi-1"]) != seriesdb.SeriesPerDevice || !slices.Contains(by["pi-1"], "0") || slices.Contains(by["pi-1"], "8") || dropped != 9 {
			t.Errorf("after build=0 again: %d of pi-1 exported (%v), %d left out: want %d with 0, without 8, and 9", len(by["pi-1"]), by["pi-1"], dropped, seriesdb.SeriesPerDevice)
		}
		// A result of a series exported changes none of that.
		if _, err := s.Ingest(ctx, []store.Incoming{res("pi-1", "20")}); err != nil {
			t.Fatal(err)
		}
		if by2, d2 := exported(); len(by2["pi-1"]) != seriesdb.SeriesPerDevice || d2 != 9 {
			t.Errorf("after build=20 again: %d exported, %d left out", len(by2["pi-1"]), d2)
		}
	})
}
