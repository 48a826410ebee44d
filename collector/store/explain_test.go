package store_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/retention"
	"github.com/edgebench/edgebench/collector/store/seriesdb"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/wire"
)

// bigTables are the tables that grow with the history: no page's query
// may read them whole.
var bigTables = regexp.MustCompile(`^(results|runs|result_specs|result_samples(_\d{8})?|events|commands|command_targets|changes|schedule_runs|samples_legacy|series)$`)

// pageQuery is a page's read: walk says it may walk an index in order
// under a LIMIT, with no condition an index serves (the newest results,
// or those with a label, which no index holds).
type pageQuery struct {
	name string
	walk bool
	run  func(context.Context) error
}

// statement is one statement the store ran, as its engine got it.
type statement struct {
	query string
	args  []any
}

// pageQueries are the reads of the pages (fleet, runs, run, compare), the
// API (devices, runs, a command's status, schedules), compare and export,
// the ingest's quota, and retention's, each as the store's method that
// runs it: what TestQueriesUseIndexes explains.
func pageQueries(s *store.Store, ids []string, cmd, device string, now time.Time) []pageQuery {
	// A cursor in the middle of the listing.
	var mid store.Cursor
	var changes string // the cursor of the second page of changes
	return []pageQuery{
		{"fleet: devices, first page", false, func(ctx context.Context) error {
			_, err := s.DevicesAfter(ctx, store.DeviceCursor{}, 100)
			return err
		}},
		{"fleet: devices, next page", false, func(ctx context.Context) error {
			_, err := s.DevicesAfter(ctx, store.DeviceCursor{Fleet: "lab", ID: "pi-1"}, 100)
			return err
		}},
		{"fleet: recent runs", true, func(ctx context.Context) error {
			p, err := s.RunsAfter(ctx, store.Filter{Limit: 3})
			if err == nil {
				mid = p.Next
			}
			return err
		}},
		{"fleet: the devices' last results, their verdicts", false, func(ctx context.Context) error {
			rows, err := s.Runs(ctx, store.Filter{IDs: ids})
			if err == nil {
				err = s.AddVerdicts(ctx, rows)
			}
			return err
		}},
		{"runs: the next page", false, func(ctx context.Context) error {
			_, err := s.RunsAfter(ctx, store.Filter{Limit: 50, Before: mid})
			return err
		}},
		{"runs: a device's", false, func(ctx context.Context) error {
			_, err := s.RunsAfter(ctx, store.Filter{Device: device, Limit: 50})
			return err
		}},
		{"runs: a device's next page", false, func(ctx context.Context) error {
			_, err := s.RunsAfter(ctx, store.Filter{Fleet: "lab", Device: device, Limit: 50, Before: mid})
			return err
		}},
		{"runs: a fleet's", false, func(ctx context.Context) error {
			_, err := s.RunsAfter(ctx, store.Filter{Fleet: "lab", Limit: 50})
			return err
		}},
		{"runs: a command's", false, func(ctx context.Context) error {
			_, err := s.RunsAfter(ctx, store.Filter{Command: cmd, Limit: 50})
			return err
		}},
		{"runs: received since", false, func(ctx context.Context) error {
			_, err := s.RunsAfter(ctx, store.Filter{Since: now.Add(-time.Hour), Limit: 50})
			return err
		}},
		{"runs: with a label, not throttled", true, func(ctx context.Context) error {
			_, err := s.RunsAfter(ctx, store.Filter{Labels: map[string]string{"server": "nginx"}, ExcludeThrottled: true, Limit: 50})
			return err
		}},
		{"run page: the last", true, func(ctx context.Context) error {
			_, err := s.ResultIDPrefix(ctx, "last")
			return err
		}},
		{"run page: a prefix, the result, its figures", false, func(ctx context.Context) error {
			if _, err := s.ResultIDPrefix(ctx, ids[0][:25]); err != nil {
				return err
			}
			if _, _, err := s.ResultKept(ctx, ids[0]); err != nil {
				return err
			}
			_, err := s.RunFigures(ctx, ids[0])
			return err
		}},
		{"compare: by device, its label keys", true, func(ctx context.Context) error {
			if _, err := s.GroupRuns(ctx, "device", store.Filter{Limit: 50001}); err != nil {
				return err
			}
			_, err := s.LabelKeys(ctx, store.Filter{Limit: 50001})
			return err
		}},
		{"compare: by a label, of a device, valid", false, func(ctx context.Context) error {
			_, err := s.GroupRuns(ctx, "server", store.Filter{Device: device, ExcludeInvalid: true, Limit: 50001})
			return err
		}},
		{"compare: by board, of a fleet, since", false, func(ctx context.Context) error {
			_, err := s.GroupRuns(ctx, "board", store.Filter{Fleet: "lab", Since: now.Add(-24 * time.Hour), Limit: 50001})
			return err
		}},
		{"compare: by url, of a command", false, func(ctx context.Context) error {
			_, err := s.GroupRuns(ctx, "url", store.Filter{Command: cmd, Limit: 50001})
			return err
		}},
		{"api: a command's status", false, func(ctx context.Context) error {
			if _, err := s.Events(ctx, cmd); err != nil {
				return err
			}
			_, err := s.Runs(ctx, store.Filter{Command: cmd})
			return err
		}},
		{"api: schedules, a schedule's firings", false, func(ctx context.Context) error {
			if _, err := s.Schedules(ctx); err != nil {
				return err
			}
			_, err := s.ScheduleRuns(ctx, "nightly", 50)
			return err
		}},
		{"ingest: the quota's bytes a day", false, func(ctx context.Context) error {
			_, err := s.StoredBytesSince(ctx, wire.Addr{Fleet: "lab", Device: device}, now.Add(-24*time.Hour))
			return err
		}},
		{"/changes: the latest", true, func(ctx context.Context) error {
			_, next, err := s.ListChanges(ctx, seriesdb.ChangeQuery{Limit: 1})
			changes = next
			return err
		}},
		{"/changes: the next page", false, func(ctx context.Context) error {
			if changes == "" {
				return errors.New("no next page of changes to explain")
			}
			_, _, err := s.ListChanges(ctx, seriesdb.ChangeQuery{Limit: 1, Cursor: changes})
			return err
		}},
		{"/changes: a device's since, the provisional", false, func(ctx context.Context) error {
			q := seriesdb.ChangeQuery{Fleet: "lab", Device: device, Since: now.Add(-24 * time.Hour), Limit: 50}
			if _, _, err := s.ListChanges(ctx, q); err != nil {
				return err
			}
			_, _, err := s.ProvisionalChanges(ctx, q)
			return err
		}},
		{"/metrics: the series' latest figures", true, func(ctx context.Context) error {
			if _, _, err := s.Latest(ctx, now.Add(-24*time.Hour), 5000); err != nil {
				return err
			}
			_, err := s.SeriesDropped(ctx, 5000)
			return err
		}},
		{"alerts: the changes to alert (an index of those alone)", true, func(ctx context.Context) error {
			_, err := s.ChangesToAlert(ctx, 100)
			return err
		}},
		{"retention", false, func(ctx context.Context) error {
			_, err := s.Retain(ctx, retention.Retention{Results: now.Add(-365 * 24 * time.Hour), Samples: now.Add(-30 * 24 * time.Hour)})
			return err
		}},
	}
}

// TestQueriesUseIndexes: every query the pages, the API, compare, the
// quota and retention run reads the tables that grow with the history
// through an index, on both engines: SQLite's EXPLAIN QUERY PLAN shows no
// SCAN of one (but a subquery's rows, or, for the reads that may walk, an
// index walked in order under a LIMIT), PostgreSQL's EXPLAIN with
// sequential scans disabled shows no Seq Scan of one, nor an index read
// without a condition (but, for the reads that may walk, under a LIMIT). The statements are those the store's methods run,
// as the engine gets them.
func TestQueriesUseIndexes(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		storetest.SeedCompare(t, s)
		now := time.Now()
		rng := rand.New(rand.NewPCG(29, 1))
		cmd := &wire.Command{V: 1, ID: wire.NewID(), IssuedAt: now, ExpiresAt: now.Add(time.Minute), Kind: wire.KindLoadTest}
		if err := s.AddCommand(ctx, "lab", "pi-1", cmd, []byte{0x80}); err != nil {
			t.Fatal(err)
		}
		var batch []store.Incoming
		var ids []string
		for i := range 20 {
			r := storetest.FakeResult(rng, "lab", fmt.Sprintf("pi-%d", i%3), map[string]string{"server": "nginx"}, now.Add(-time.Duration(i)*time.Minute), 1000, 800)
			r.CommandID = cmd.ID
			in := storetest.Incoming(t, r)
			in.Received = r.CreatedAt
			batch = append(batch, in)
			ids = append(ids, r.ID)
		}
		if _, err := s.Ingest(ctx, batch); err != nil {
			t.Fatal(err)
		}
		// Two series with a step each: stored changes for /changes to page.
		var steps []store.Incoming
		for _, dev := range []string{"pi-1", "pi-2"} {
			for i := range 40 {
				rps := 1000.0
				if i >= 20 {
					rps = 700
				}
				at := now.Add(time.Duration(i-80) * time.Hour)
				r := storetest.LightResult("lab", dev, map[string]string{"server": "nginx"},
					storetest.Point{At: at, RPS: rps * (1 + 0.01*rng.NormFloat64()), P99US: 2000, CPUPct: 40})
				in := storetest.Incoming(t, r)
				in.Received = at
				steps = append(steps, in)
			}
		}
		if _, err := s.Ingest(ctx, steps); err != nil {
			t.Fatal(err)
		}
		if err := s.AddSchedule(ctx, storetest.Schedule("nightly"), now); err != nil {
			t.Fatal(err)
		}
		for _, q := range pageQueries(s, ids, cmd.ID, "pi-1", now) {
			var ran []statement
			s.Trace(func(query string, args []any) { ran = append(ran, statement{query, append([]any(nil), args...)}) })
			err := q.run(ctx)
			s.Trace(nil)
			if err != nil {
				t.Fatalf("%s: %v", q.name, err)
			}
			if len(ran) == 0 {
				t.Fatalf("%s: ran no statement", q.name)
			}
			for _, st := range ran {
				if !strings.HasPrefix(strings.TrimSpace(st.query), "SELECT") && !strings.HasPrefix(strings.TrimSpace(st.query), "DELETE") {
					continue
				}
				var bad []string
				var plan string
				if e == storetest.SQLite {
					plan, bad = sqlitePlan(t, s.R(), st, q.walk)
				} else {
					plan, bad = postgresPlan(t, s.W(), st, q.walk)
				}
				if len(bad) > 0 {
					t.Errorf("%s: %s\n%s\nreads a table whole: %s\nplan:\n%s", q.name, oneLine(st.query), st.args, strings.Join(bad, "; "), plan)
				}
			}
		}
	})
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// sqlitePlan is SQLite's plan of st and its steps that read a big table
// whole.
func sqlitePlan(t *testing.T, db *sql.DB, st statement, walk bool) (string, []string) {
	t.Helper()
	rows, err := db.Query("EXPLAIN QUERY PLAN "+st.query, st.args...)
	if err != nil {
		t.Fatalf("explain %s: %v", oneLine(st.query), err)
	}
	defer rows.Close()
	var lines, bad []string
	subqueries := map[string]bool{} // the rows of a subquery, not a table
	limited := walk && strings.Contains(st.query, "LIMIT")
	scan := regexp.MustCompile(`^SCAN (\S+)( USING (COVERING )?INDEX (\S+))?`)
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, detail)
		for _, kw := range []string{"CO-ROUTINE ", "MATERIALIZE "} {
			if name, ok := strings.CutPrefix(detail, kw); ok {
				subqueries[strings.Fields(name)[0]] = true
			}
		}
		// A read of one device's rows through the index of its fleet's
		// reads the fleet's, and a fleet may be the whole store: without
		// statistics SQLite takes either index for fleet = ? AND
		// device = ?, and took the fleet's (1.3 s a read at 1,000,000
		// results of one fleet).
		if strings.Contains(st.query, "device = ?") && strings.HasPrefix(detail, "SEARCH ") &&
			strings.Contains(detail, "fleet=?") && !strings.Contains(detail, "device=?") {
			bad = append(bad, detail+": the fleet's rows for one device's")
		}
		m := scan.FindStringSubmatch(detail)
		if m == nil || subqueries[m[1]] {
			continue
		}
		table := m[1]
		if a, ok := sqliteAliases[table]; ok {
			table = a
		}
		if !bigTables.MatchString(table) {
			continue
		}
		if m[4] == "" || !limited { // a table scan, or an index walked whole
			bad = append(bad, detail)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n"), bad
}

// sqliteAliases are the tables the store's queries name by an alias.
var sqliteAliases = map[string]string{"r": "results", "u": "runs", "sp": "result_specs", "sa": "result_samples", "p": "runs_backfill",
	"c": "commands", "e": "events", "f": "schedule_runs", "l": "schedule_runs", "n": "changes"}

// postgresPlan is PostgreSQL's plan of st, with sequential scans, hash and
// merge joins disabled (a plan that still has one has no index to use),
// and its steps that read a big table whole.
func postgresPlan(t *testing.T, db *sql.DB, st statement, walk bool) (string, []string) {
	t.Helper()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A test's tables are small, where reading one whole and hashing it
	// costs least; without sequential scans, hash and merge joins the
	// plan says whether an index can serve the query, as one would on a
	// store of millions of results.
	for _, set := range []string{"enable_seqscan", "enable_hashjoin", "enable_mergejoin"} {
		if _, err := conn.ExecContext(ctx, "SET "+set+" = off"); err != nil {
			t.Fatal(err)
		}
		defer conn.ExecContext(ctx, "RESET "+set)
	}
	var out string
	if err := conn.QueryRowContext(ctx, "EXPLAIN (FORMAT JSON) "+st.query, st.args...).Scan(&out); err != nil {
		t.Fatalf("explain %s: %v", oneLine(st.query), err)
	}
	var plans []struct {
		Plan pgNode `json:"Plan"`
	}
	if err := json.Unmarshal([]byte(out), &plans); err != nil {
		t.Fatal(err)
	}
	var bad []string
	for _, p := range plans {
		p.Plan.walk(false, walk, &bad)
	}
	return out, bad
}

type pgNode struct {
	Type      string   `json:"Node Type"`
	Relation  string   `json:"Relation Name"`
	IndexCond string   `json:"Index Cond"`
	Recheck   string   `json:"Recheck Cond"`
	Plans     []pgNode `json:"Plans"`
}

// walk notes the nodes under n that read a big table whole: a Seq Scan,
// or an index scan without a condition and without a LIMIT that stops it
// (one over a Sort or an Aggregate does not: they read all first, nor does
// a sorted Aggregate, which the store's paged queries keep inside the
// LIMIT's subquery).
func (n pgNode) walk(limited, mayWalk bool, bad *[]string) {
	switch n.Type {
	case "Limit":
		limited = mayWalk
	case "Sort", "Aggregate", "Hash", "HashAggregate", "Materialize", "Unique", "SetOp":
		limited = false // an Incremental Sort streams: it sorts each run of equal leading keys
	}
	if bigTables.MatchString(n.Relation) {
		switch {
		case n.Type == "Seq Scan":
			*bad = append(*bad, "Seq Scan on "+n.Relation)
		case (n.Type == "Index Scan" || n.Type == "Index Only Scan") && n.IndexCond == "" && !limited:
			*bad = append(*bad, n.Type+" of all "+n.Relation)
		case n.Type == "Bitmap Heap Scan" && n.Recheck == "":
			*bad = append(*bad, "Bitmap Heap Scan of all "+n.Relation)
		}
	}
	for _, c := range n.Plans {
		c.walk(limited, mayWalk, bad)
	}
}
