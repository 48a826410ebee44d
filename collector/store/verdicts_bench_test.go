package store_test

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/compare"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/wire"
)

// seedVerdictBench stores n results of 3 runs each on SQLite, every run
// with a verdict (a third of the results generator-bound, not valid) and
// every result --repeat auto's.
func seedVerdictBench(b *testing.B, n int) *store.Store {
	b.Helper()
	return seedVerdictBenchAt(b, filepath.Join(b.TempDir(), "bench.db"), n)
}

func seedVerdictBenchAt(b *testing.B, path string, n int) *store.Store {
	b.Helper()
	ctx := context.Background()
	s, err := store.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	rng := rand.New(rand.NewPCG(7, 7))
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	var batch []store.Incoming
	for i := range n {
		server := []string{"nginx", "kangle", "caddy"}[i%3]
		r := storetest.FakeResult(rng, "lab", "pi-"+string(rune('1'+i%4)), map[string]string{"server": server}, at, 1000+rng.Float64()*50, 800)
		r.Runs = append(r.Runs, storetest.FakeRun(rng, at.Add(11*time.Second), 1000+rng.Float64()*50, 800, 3500),
			storetest.FakeRun(rng, at.Add(22*time.Second), 1000+rng.Float64()*50, 800, 3500))
		for j := range r.Runs {
			v := &wire.Verdict{LimitedBy: "server", Valid: true, Reasons: []string{"nginx at 99 % of one core"}}
			if server == "kangle" {
				v = &wire.Verdict{LimitedBy: "generator", Reasons: []string{"edgebench itself used 99 % of one core"}}
			}
			r.Runs[j].Verdict = v
		}
		stable := i%2 == 0
		r.Repeat = &wire.Repeat{Runs: 3, RSDPct: 2.5, Auto: true, Stable: &stable}
		batch = append(batch, storetest.Incoming(b, r))
		at = at.Add(time.Minute)
		if len(batch) == 500 {
			if _, err := s.Ingest(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if _, err := s.Ingest(ctx, batch); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkCompareVerdicts is compare by server over 2,000 results of 3
// runs each, every run with a verdict.
func BenchmarkCompareVerdicts(b *testing.B) {
	s := seedVerdictBench(b, 2000)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		c, err := compare.Runs(ctx, s, compare.Options{By: "server", Base: "nginx"})
		if err != nil || len(c.Tables) != 1 || len(c.Tables[0].Groups) != 3 {
			b.Fatalf("%+v %v", c, err)
		}
		for _, g := range c.Tables[0].Groups {
			if (g.Key == "kangle") != (g.Invalid == g.N && g.GeneratorBound == g.N) {
				b.Fatalf("group %s: %d runs, %d invalid", g.Key, g.N, g.Invalid)
			}
		}
	}
}

// BenchmarkRunsVerdicts is the runs listing of the same 2,000 results
// with their verdicts and repeat outcomes.
func BenchmarkRunsVerdicts(b *testing.B) {
	s := seedVerdictBench(b, 2000)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		rows, err := s.Runs(ctx, store.Filter{})
		if err == nil {
			err = s.AddVerdicts(ctx, rows)
		}
		if err != nil || len(rows) != 2000 || rows[0].Verdict == "" || rows[0].Stable == "" {
			b.Fatalf("%d rows %v", len(rows), err)
		}
	}
}

// BenchmarkGroupRunsVerdicts is the store's part of that compare: the
// 6,000 runs grouped by server, each with its verdict.
func BenchmarkGroupRunsVerdicts(b *testing.B) {
	s := seedVerdictBench(b, 2000)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		runs, err := s.GroupRuns(ctx, "server", store.Filter{})
		if err != nil || len(runs) != 6000 {
			b.Fatalf("%d runs %v", len(runs), err)
		}
		invalid := 0
		for _, r := range runs {
			if r.Invalid && r.GeneratorBound {
				invalid++
			}
		}
		if invalid != 2001 {
			b.Fatalf("%d runs not valid, want 2001", invalid)
		}
	}
}

// BenchmarkVerdictBackfill is opening a store of the schema before the
// verdict columns that holds the same 2,000 results: the backfill
// decodes each payload once and fills the columns.
func BenchmarkVerdictBackfill(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		path := filepath.Join(b.TempDir(), "bench.db")
		s := seedVerdictBenchAt(b, path, 2000)
		downgradeVerdicts(b, s)
		s.Close()
		b.StartTimer()
		s, err := store.Open(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		if s.Backfilled() != (store.VerdictBackfill{Results: 2000, Runs: 6000}) {
			b.Fatalf("backfill did %+v", s.Backfilled())
		}
		s.Close()
	}
}
