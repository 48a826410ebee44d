package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/compare"
	"github.com/edgebench/edgebench/collector/rebuild"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/wire"
)

// verdictFixture is four results of two runs each, labelled by name:
// srv (valid, the server then memory; --repeat auto, stable), gen (not
// valid, the load generator; --repeat auto, not stable), old (recorded
// before verdicts) and mixed (a run without a verdict, then a run the
// disk invalidated; a plain --repeat).
func verdictFixture(t testing.TB) map[string]store.Incoming {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	yes, no := true, false
	verdicts := map[string][2]*wire.Verdict{
		"srv":   {{LimitedBy: "server", Valid: true, Reasons: []string{"nginx at 99 % of one core"}}, {LimitedBy: "memory", Valid: true}},
		"gen":   {{LimitedBy: "generator", Reasons: []string{"edgebench itself used 99 % of one core"}}, {LimitedBy: "generator"}},
		"old":   {nil, nil},
		"mixed": {nil, {LimitedBy: "disk", Reasons: []string{"the disk was 100 % busy"}}},
	}
	repeats := map[string]*wire.Repeat{
		"srv":   {Runs: 3, RSDPct: 1.3, Auto: true, Stable: &yes, MaxRSDPct: 3.5},
		"gen":   {Runs: 10, RSDPct: 0.2, Judged: "p99", JudgedRSDPct: 6.1, Auto: true, Stable: &no, MaxRSDPct: 3.5}, // open loop: judged on p99
		"mixed": {Runs: 2, RSDPct: 4},
	}
	out := map[string]store.Incoming{}
	for _, name := range []string{"srv", "gen", "old", "mixed"} {
		r := storetest.FakeResult(rng, "lab", "pi-1", map[string]string{"server": name}, at, 1000, 800)
		r.Runs = append(r.Runs, storetest.FakeRun(rng, at.Add(11*time.Second), 1010, 800, 3500))
		for j, v := range verdicts[name] {
			r.Runs[j].Verdict = v
		}
		r.Repeat = repeats[name]
		out[name] = storetest.Incoming(t, r)
		at = at.Add(time.Minute)
	}
	return out
}

// checkVerdictColumns checks where each verdict landed in the store:
// each run's limited_by and valid, each result's repeat outcome (NULL
// is "-").
func checkVerdictColumns(t *testing.T, s *store.Store, fx map[string]store.Incoming, skip ...string) {
	t.Helper()
	ctx := context.Background()
	name := map[string]string{}
	for n, in := range fx {
		name[in.Result.ID] = n
	}
	rows, err := s.W().QueryContext(ctx, `SELECT result_id, idx, coalesce(limited_by, '-'),
		CASE WHEN valid IS NULL THEN '-' WHEN valid THEN 'valid' ELSE 'NOT VALID' END FROM runs`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var id, limitedBy, valid string
		var idx int
		if err := rows.Scan(&id, &idx, &limitedBy, &valid); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s/%d %s %s", name[id], idx, limitedBy, valid))
	}
	rows.Close()
	rows, err = s.W().QueryContext(ctx, `SELECT id, CASE WHEN stable IS NULL THEN '-' WHEN stable THEN 'stable' ELSE 'not stable' END,
		coalesce(CAST(stable_rsd_pct AS TEXT), '-'), coalesce(CAST(stable_runs AS TEXT), '-'), coalesce(stable_on, '-') FROM results`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, stable, rsd, n, on string
		if err := rows.Scan(&id, &stable, &rsd, &n, &on); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %s %s %s %s", name[id], stable, rsd, n, on))
	}
	rows.Close()
	want := []string{
		"srv/0 server valid", "srv/1 memory valid", "srv stable 1.3 3 -",
		"gen/0 generator NOT VALID", "gen/1 generator NOT VALID", "gen not stable 6.1 10 p99",
		"old/0 - -", "old/1 - -", "old - - - -",
		"mixed/0 - -", "mixed/1 disk NOT VALID", "mixed - - - -",
	}
	for _, n := range skip { // a result whose payload does not decode: nothing filled
		for i, w := range want {
			if strings.HasPrefix(w, n+"/") {
				want[i] = w[:strings.IndexByte(w, ' ')] + " - -"
			} else if strings.HasPrefix(w, n+" ") {
				want[i] = n + " - - - -"
			}
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("verdict columns:\n got %q\nwant %q", got, want)
	}
}

// checkVerdictReads checks what the runs listing and compare read from
// the columns against what they read from the payloads before the store
// kept them (ResultVerdict, StableText, each run's verdict), and against
// the words themselves.
func checkVerdictReads(t *testing.T, s *store.Store, fx map[string]store.Incoming, skip ...string) {
	t.Helper()
	ctx := context.Background()
	rows, err := s.Runs(ctx, store.Filter{})
	if err == nil {
		err = s.AddVerdicts(ctx, rows)
	}
	if err != nil || len(rows) != len(fx) {
		t.Fatalf("runs %d of %d: %v", len(rows), len(fx), err)
	}
	want := map[string][2]string{
		"srv": {"server", "stable (1.3 %) after 3 runs"}, "gen": {"NOT VALID: generator", "not stable on p99 (6.1 %) after 10 runs"},
		"old": {"", ""}, "mixed": {"NOT VALID: disk", ""},
	}
	for _, n := range skip {
		want[n] = [2]string{}
	}
	for _, r := range rows {
		n := r.Labels["server"]
		res := fx[n].Result
		if !slices.Contains(skip, n) && (r.Verdict != ResultVerdict(res) || r.Stable != rebuild.StableText(res.Repeat)) {
			t.Errorf("%s: runs lists %q %q, its payload %q %q", n, r.Verdict, r.Stable, ResultVerdict(res), rebuild.StableText(res.Repeat))
		}
		if w := want[n]; r.Verdict != w[0] || r.Stable != w[1] {
			t.Errorf("%s: runs lists %q %q, want %q %q", n, r.Verdict, r.Stable, w[0], w[1])
		}
	}
	for _, exclude := range []bool{false, true} {
		c, err := compare.Runs(ctx, s, compare.Options{By: "server", Base: "srv", Filter: store.Filter{ExcludeInvalid: exclude}})
		if err != nil || len(c.Tables) != 1 {
			t.Fatalf("compare: %+v %v", c, err)
		}
		var got []string
		for _, g := range c.Tables[0].Groups {
			got = append(got, fmt.Sprintf("%s n=%d invalid=%d generator=%d", g.Key, g.N, g.Invalid, g.GeneratorBound))
		}
		want := []string{"srv n=2 invalid=0 generator=0", "gen n=2 invalid=2 generator=2", "mixed n=2 invalid=1 generator=0", "old n=2 invalid=0 generator=0"}
		switch {
		case exclude && slices.Contains(skip, "mixed"):
			want = []string{"srv n=2 invalid=0 generator=0", "mixed n=2 invalid=0 generator=0", "old n=2 invalid=0 generator=0"}
		case exclude:
			want = []string{"srv n=2 invalid=0 generator=0", "mixed n=1 invalid=0 generator=0", "old n=2 invalid=0 generator=0"}
		case slices.Contains(skip, "mixed"):
			want[2] = "mixed n=2 invalid=0 generator=0"
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("compare (exclude invalid %v):\n got %q\nwant %q", exclude, got, want)
		}
	}
}

// Ingest stores each run's verdict and each result's --repeat auto
// outcome in their columns; the listing and compare read them back as
// they read the payloads.
func TestVerdictColumns(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		s := e.Open(t)
		fx := verdictFixture(t)
		var batch []store.Incoming
		for _, in := range fx {
			batch = append(batch, in)
		}
		if _, err := s.Ingest(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
		checkVerdictColumns(t, s, fx)
		checkVerdictReads(t, s, fx)
	})
}

// downgradeVerdicts takes a store back to the schema before the verdict
// columns: the columns and the backfill list dropped, the migration
// unrecorded. Where a later migration follows the verdicts' it leaves
// the schema and does what the migration does to the rows stored before:
// the columns emptied, every result listed.
func downgradeVerdicts(t testing.TB, s *store.Store) {
	t.Helper()
	ctx := context.Background()
	engine := s.Engine()
	ms, err := store.MigrationNames(engine)
	if err != nil {
		t.Fatal(err)
	}
	stmts := []string{"ALTER TABLE runs DROP COLUMN limited_by", "ALTER TABLE runs DROP COLUMN valid",
		"ALTER TABLE results DROP COLUMN stable", "ALTER TABLE results DROP COLUMN stable_rsd_pct",
		"ALTER TABLE results DROP COLUMN stable_runs", "ALTER TABLE results DROP COLUMN stable_on", "DROP TABLE verdicts_backfill"}
	switch {
	case !strings.HasSuffix(ms[len(ms)-1], "_verdicts"):
		t.Logf("the last %s migration is %s: the verdict columns emptied, not dropped", engine, ms[len(ms)-1])
		stmts = []string{"UPDATE runs SET limited_by = NULL, valid = NULL",
			"UPDATE results SET stable = NULL, stable_rsd_pct = NULL, stable_runs = NULL, stable_on = NULL",
			"DELETE FROM verdicts_backfill", "INSERT INTO verdicts_backfill (result_id) SELECT id FROM results"}
	case engine == "sqlite":
		stmts = append(stmts, fmt.Sprintf("PRAGMA user_version = %d", len(ms)-1))
	default:
		stmts = append(stmts, fmt.Sprintf("DELETE FROM edgebench_migrations WHERE version = %d", len(ms)))
	}
	for _, q := range stmts {
		if _, err := s.W().ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// A store of the schema before the verdict columns, with results that
// carry verdicts in their payloads, gets them filled from the payloads
// when it is opened, once; a payload that does not decode stays without
// a verdict and is still listed.
func TestVerdictBackfill(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		path := e.DB(t)
		s, err := store.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		fx := verdictFixture(t)
		var batch []store.Incoming
		for _, in := range fx {
			batch = append(batch, in)
		}
		if _, err := s.Ingest(ctx, batch); err != nil {
			t.Fatal(err)
		}
		downgradeVerdicts(t, s)
		s.Close()

		if s, err = store.Open(ctx, path); err != nil {
			t.Fatal(err)
		}
		if b := s.Backfilled(); b != (store.VerdictBackfill{Results: 4, Runs: 5}) {
			t.Errorf("backfill did %+v, want 4 results, 5 runs", b)
		}
		checkVerdictColumns(t, s, fx)
		checkVerdictReads(t, s, fx)

		// Once more, with mixed's payload no longer decoding.
		downgradeVerdicts(t, s)
		if _, err := s.W().ExecContext(ctx, s.Q("UPDATE results SET raw = ? WHERE id = ?"), []byte{0xc1}, fx["mixed"].Result.ID); err != nil {
			t.Fatal(err)
		}
		s.Close()
		if s, err = store.Open(ctx, path); err != nil {
			t.Fatal(err)
		}
		if b := s.Backfilled(); b != (store.VerdictBackfill{Results: 4, Runs: 4, Undecodable: 1}) {
			t.Errorf("backfill did %+v, want 4 results, 4 runs, 1 undecodable", b)
		}
		checkVerdictColumns(t, s, fx, "mixed")
		checkVerdictReads(t, s, fx, "mixed")
		s.Close()

		// Nothing left to do.
		if s, err = store.Open(ctx, path); err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var left int
		if err := s.W().QueryRowContext(ctx, "SELECT count(*) FROM verdicts_backfill").Scan(&left); err != nil || left != 0 || s.Backfilled() != (store.VerdictBackfill{}) {
			t.Errorf("reopened: %d left (%v), did %+v", left, err, s.Backfilled())
		}
	})
}

// ResultVerdict is what the runs listing said of a result when it read
// its payload: the verdicts of its runs summed up.
func ResultVerdict(res *wire.Result) string {
	vs := make([]*wire.Verdict, len(res.Runs))
	for i := range res.Runs {
		vs[i] = res.Runs[i].Verdict
	}
	return store.Summarize(vs)
}
