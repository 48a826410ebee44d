package store_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/compare"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/storetest"
)

// TestErrorsCountEveryFailure: a run's errors are the failures its own
// report counts, failed TLS set-ups and HTTP/2 resets included, in
// compare, the CSV and benchfmt; rows stored with the old count are
// recounted from their payloads when the store is opened.
func TestErrorsCountEveryFailure(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		path := e.DB(t)
		s, err := store.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		r := storetest.FakeResult(rand.New(rand.NewPCG(9, 9)), "lab", "pi-1", nil, time.Now(), 1000, 800)
		r.Runs[0].Errors.Connect, r.Runs[0].Errors.TLS, r.Runs[0].Errors.Reset = 1, 5, 2 // and 3 timeouts
		const want = 11
		if _, err := s.Ingest(ctx, []store.Incoming{storetest.Incoming(t, r)}); err != nil {
			t.Fatal(err)
		}
		check := func(when string) {
			t.Helper()
			c, err := compare.Runs(ctx, s, compare.Options{By: "device"})
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Tables[0].Groups[0].Stats["errors"].Sum; got != want {
				t.Errorf("%s: compare's errors %v, want %d", when, got, want)
			}
			var b bytes.Buffer
			if err := compare.Export(ctx, &b, s, "csv", store.Filter{}); err != nil {
				t.Fatal(err)
			}
			recs, _ := csv.NewReader(&b).ReadAll()
			if col := slices.Index(recs[0], "errors_total"); recs[1][col] != "11" {
				t.Errorf("%s: CSV errors %q, want 11", when, recs[1][col])
			}
			b.Reset()
			if err := compare.Export(ctx, &b, s, "benchfmt", store.Filter{}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), " 11 errors") {
				t.Errorf("%s: benchfmt:\n%s", when, b.String())
			}
		}
		check("ingested")
		// A row stored before: the old count, listed by the migration.
		if _, err := s.W().ExecContext(ctx, "UPDATE runs SET errors = 4"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.W().ExecContext(ctx, s.Q("INSERT INTO errors_recount (result_id) VALUES (?)"), r.ID); err != nil {
			t.Fatal(err)
		}
		s.Close()
		if s, err = store.Open(ctx, path); err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		check("recounted")
		var left int
		if err := s.W().QueryRowContext(ctx, "SELECT count(*) FROM errors_recount").Scan(&left); err != nil || left != 0 {
			t.Errorf("%d results left to recount (%v)", left, err)
		}
	})
}
