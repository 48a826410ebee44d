package store_test

import (
	"context"
	"testing"

	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/storetest"
)

// TestSpecsOfOlderResults: results stored before the store kept specs get
// theirs from their payload when the store is opened.
func TestSpecsOfOlderResults(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		path := e.DB(t)
		s, err := store.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		storetest.SeedMixedSpecs(t, s)
		// As a store from before specs were kept: none kept, every result
		// listed by the migration that lists them.
		if _, err := s.W().ExecContext(ctx, "DELETE FROM result_specs"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.W().ExecContext(ctx, "INSERT INTO specs_backfill (result_id) SELECT id FROM results"); err != nil {
			t.Fatal(err)
		}
		s.Close()
		s, err = store.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		rows, err := s.Runs(ctx, store.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		urls := map[string]int{}
		for _, r := range rows {
			if r.Spec.Method != "GET" || r.Spec.KeepAlive == nil || !*r.Spec.KeepAlive || r.Spec.Connections != 10 {
				t.Errorf("%s: spec %+v", r.ID, r.Spec)
			}
			urls[r.Spec.URL]++
		}
		if urls["http://127.0.0.1:8080/index.html"] != 6 || urls["http://127.0.0.1:8080/mixed"] != 1 {
			t.Errorf("specs by URL %v", urls)
		}
		// The list is done with: the next open reads none of it.
		var left int
		if err := s.W().QueryRowContext(ctx, "SELECT count(*) FROM specs_backfill").Scan(&left); err != nil || left != 0 {
			t.Errorf("%d results still listed for their specs (%v)", left, err)
		}
	})
}
