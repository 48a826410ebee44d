package collector

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/compare"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/retention"
	"github.com/edgebench/edgebench/collector/store/storetest"
)

// TestListingAPI: /api/runs and /api/devices, followed by their Link
// headers, list every result (the newest first) and every device, each
// once, a page of at most limit rows; a bad limit, cursor or parameter is
// a 400 that says why.
func TestListingAPI(t *testing.T) {
	ctx := context.Background()
	s := storetest.OpenSQLite(t)
	rng := rand.New(rand.NewPCG(33, 33))
	now := time.Now()
	var batch []store.Incoming
	for i := range 17 {
		at := now.Add(-time.Duration(i/2) * time.Minute)
		r := storetest.FakeResult(rng, "lab", fmt.Sprintf("pi-%d", i%5), nil, at, 1000, 800)
		in := storetest.Incoming(t, r)
		in.Received = at
		batch = append(batch, in)
	}
	if _, err := s.Ingest(ctx, batch); err != nil {
		t.Fatal(err)
	}
	c := &Collector{store: s}
	mux := http.NewServeMux()
	c.listingAPI(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	next := regexp.MustCompile(`^<(/api/[^>]+)>; rel="next"$`)
	walk := func(path string, limit int, decode func(*http.Response) int) int {
		pages := 0
		for path != "" {
			resp, err := http.Get(srv.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 200 {
				t.Fatalf("%s: %s", path, resp.Status)
			}
			if n := decode(resp); n > limit || n == 0 {
				t.Errorf("%s: %d rows, want 1 to %d", path, n, limit)
			}
			resp.Body.Close()
			path = ""
			if l := resp.Header.Get("Link"); l != "" {
				m := next.FindStringSubmatch(l)
				if m == nil {
					t.Fatalf("Link %q", l)
				}
				path = m[1]
			}
			if pages++; pages > 20 {
				t.Fatal("no end to the pages")
			}
		}
		return pages
	}
	var runs []string
	pages := walk("/api/runs?limit=4", 4, func(resp *http.Response) int {
		var rows []compare.ExportRow
		if err := json.NewDecoder(resp.Body).Decode(&rows); err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			runs = append(runs, r.ID)
		}
		return len(rows)
	})
	whole, err := s.Runs(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, r := range whole {
		want = append(want, r.ID)
	}
	if !slices.Equal(runs, want) || pages != 5 {
		t.Errorf("%d pages of runs: %v\nwant 5: %v", pages, runs, want)
	}
	var devs []string
	pages = walk("/api/devices?limit=2", 2, func(resp *http.Response) int {
		var rows []store.Device
		if err := json.NewDecoder(resp.Body).Decode(&rows); err != nil {
			t.Fatal(err)
		}
		for _, d := range rows {
			devs = append(devs, d.ID)
		}
		return len(rows)
	})
	if !slices.Equal(devs, []string{"pi-0", "pi-1", "pi-2", "pi-3", "pi-4"}) || pages != 3 {
		t.Errorf("%d pages of devices: %v", pages, devs)
	}
	for _, path := range []string{"/api/runs?limit=0", fmt.Sprintf("/api/runs?limit=%d", store.MaxPage+1), "/api/runs?before=yesterday",
		"/api/runs?offset=10", "/api/runs?limit=1&limit=2", "/api/devices?after=nofleet", "/api/devices?device=pi-1"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %s, want 400", path, resp.Status)
		}
	}
}

// TestRetentionAt: --keep 0 keeps the results, --keep-samples below 0
// keeps the samples, and each time is now less its keep.
func TestRetentionAt(t *testing.T) {
	now := time.Date(2026, 12, 6, 7, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	for _, tc := range []struct {
		keep, samples time.Duration
		want          retention.Retention
	}{
		{0, DefaultKeepSamples, retention.Retention{Samples: now.Add(-30 * day)}},
		{365 * day, -1, retention.Retention{Results: now.Add(-365 * day)}},
		{365 * day, 7 * day, retention.Retention{Results: now.Add(-365 * day), Samples: now.Add(-7 * day)}},
		{0, -1, retention.Retention{}},
	} {
		if got := retentionAt(now, tc.keep, tc.samples); got != tc.want {
			t.Errorf("keep %v, samples %v: %+v, want %+v", tc.keep, tc.samples, got, tc.want)
		}
	}
}
