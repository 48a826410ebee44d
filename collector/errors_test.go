package collector

import (
	"bytes"
	"context"
	"encoding/csv"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestErrorsCountEveryFailure: a run's errors are the failures its own
// report counts, failed TLS set-ups and HTTP/2 resets included, in
// compare, the CSV and benchfmt; rows stored with the old count are
// recounted from their payloads when the store is opened.
func TestErrorsCountEveryFailure(t *testing.T) {
	eachEngine(t, func(t *testing.T, e storeEngine) {
		ctx := context.Background()
		path := e.db(t)
		s, err := OpenStore(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		r := fakeResult(rand.New(rand.NewPCG(9, 9)), "lab", "pi-1", nil, time.Now(), 1000, 800)
		r.Runs[0].Errors.Connect, r.Runs[0].Errors.TLS, r.Runs[0].Errors.Reset = 1, 5, 2 // and 3 timeouts
		const want = 11
		if _, err := s.Ingest(ctx, []Incoming{incoming(t, r)}); err != nil {
			t.Fatal(err)
		}
		check := func(when string) {
			t.Helper()
			c, err := s.Compare(ctx, CompareOptions{By: "device"})
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Tables[0].Groups[0].Stats["errors"].Sum; got != want {
				t.Errorf("%s: compare's errors %v, want %d", when, got, want)
			}
			var b bytes.Buffer
			if err := s.Export(ctx, &b, "csv", Filter{}); err != nil {
				t.Fatal(err)
			}
			recs, _ := csv.NewReader(&b).ReadAll()
			if col := slices.Index(recs[0], "errors_total"); recs[1][col] != "11" {
				t.Errorf("%s: CSV errors %q, want 11", when, recs[1][col])
			}
			b.Reset()
			if err := s.Export(ctx, &b, "benchfmt", Filter{}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), " 11 errors") {
				t.Errorf("%s: benchfmt:\n%s", when, b.String())
			}
		}
		check("ingested")
		// A row stored before: the old count, listed by the migration.
		if _, err := s.w.ExecContext(ctx, "UPDATE runs SET errors = 4"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.w.ExecContext(ctx, s.d.q("INSERT INTO errors_recount (result_id) VALUES (?)"), r.ID); err != nil {
			t.Fatal(err)
		}
		s.Close()
		if s, err = OpenStore(ctx, path); err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		check("recounted")
		var left int
		if err := s.w.QueryRowContext(ctx, "SELECT count(*) FROM errors_recount").Scan(&left); err != nil || left != 0 {
			t.Errorf("%d results left to recount (%v)", left, err)
		}
	})
}
