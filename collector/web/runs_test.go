package web

import (
	"context"
	"fmt"
	"html"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/retention"
	"github.com/edgebench/edgebench/collector/store/storetest"
)

// TestRunsPages: /runs, followed by its "Older runs" links, lists every
// result once, the newest received first, runsPerPage a page, and keeps
// its filter from page to page; the fleet page shows the newest
// runsPerPage and links to it; a bad cursor or parameter is a 400.
func TestRunsPages(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		srv, s := newTestWeb(t, e)
		rng := rand.New(rand.NewPCG(34, 34))
		now := time.Now()
		var batch []store.Incoming
		for i := range runsPerPage + 13 {
			at := now.Add(-time.Duration(i) * time.Second)
			r := storetest.FakeResult(rng, "lab", fmt.Sprintf("pi-%d", 3+i%2), nil, at, 1000, 800)
			in := storetest.Incoming(t, r)
			in.Received = at
			batch = append(batch, in)
		}
		if _, err := s.Ingest(ctx, batch); err != nil {
			t.Fatal(err)
		}
		ids := regexp.MustCompile(`href="/runs/([0-9A-Z]+)"`)
		next := regexp.MustCompile(`id="next-runs" href="([^"]+)"`)
		for _, f := range []store.Filter{{}, {Fleet: "lab", Device: "pi-3"}} {
			whole, err := s.Runs(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, r := range whole {
				want = append(want, r.ID)
			}
			path := "/runs"
			if f.Device != "" {
				path = "/runs?fleet=lab&device=pi-3"
			}
			var got []string
			for pages := 0; path != ""; pages++ {
				if pages > 5 {
					t.Fatal("no end to the pages")
				}
				code, body := get(t, srv.URL+path)
				if code != 200 {
					t.Fatalf("%s: %d", path, code)
				}
				n := 0
				for _, m := range ids.FindAllStringSubmatch(body, -1) {
					got = append(got, m[1])
					n++
				}
				if n > runsPerPage {
					t.Errorf("%s: %d runs on a page", path, n)
				}
				path = ""
				if m := next.FindStringSubmatch(body); m != nil {
					path = html.UnescapeString(m[1])
					if f.Device != "" && !strings.Contains(path, "device=pi-3") {
						t.Errorf("the next page %s lost the filter", path)
					}
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("%+v: the pages list %d runs, want %d:\n%v\n%v", f, len(got), len(want), got, want)
			}
		}
		code, body := get(t, srv.URL+"/")
		if code != 200 || !strings.Contains(body, `id="more-runs"`) || len(ids.FindAllString(body, -1)) < runsPerPage {
			t.Errorf("the fleet page: %d, %d runs, a link to the rest: %v", code, len(ids.FindAllString(body, -1)), strings.Contains(body, "more-runs"))
		}
		for _, path := range []string{"/runs?before=1:", "/runs?offset=50", "/?after=x"} {
			if code, _ := get(t, srv.URL+path); code != 400 {
				t.Errorf("%s: %d, want 400", path, code)
			}
		}
	})
}

// TestPrunedRunPage: the run page of a result whose samples were pruned
// says so and shows the figures the store kept of it (its req/s as
// stored), without charts; a result with its samples has its charts and
// no such note.
func TestPrunedRunPage(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		srv, s := newTestWeb(t, e)
		rng := rand.New(rand.NewPCG(35, 35))
		at := time.Now().Add(-40 * 24 * time.Hour)
		r := storetest.FakeResult(rng, "lab", "pi-9", nil, at, 1234, 800)
		in := storetest.Incoming(t, r)
		in.Received = at
		if _, err := s.Ingest(ctx, []store.Incoming{in}); err != nil {
			t.Fatal(err)
		}
		figs, err := s.RunFigures(ctx, r.ID)
		if err != nil || len(figs) != 1 {
			t.Fatal(figs, err)
		}
		if _, err := s.Retain(ctx, retention.Retention{Samples: time.Now().Add(-30 * 24 * time.Hour)}); err != nil {
			t.Fatal(err)
		}
		code, body := get(t, srv.URL+"/runs/"+r.ID)
		rps := fmt.Sprintf("Requests/sec: %.2f", figs[0].RPS)
		if code != 200 || !strings.Contains(body, `id="pruned"`) || !strings.Contains(body, rps) || strings.Contains(body, "data-chart=") {
			t.Errorf("the pruned result's page (%d): a note %v, %q %v, charts %v", code, strings.Contains(body, `id="pruned"`), rps,
				strings.Contains(body, rps), strings.Contains(body, "data-chart="))
		}
		last, err := s.Runs(ctx, store.Filter{Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, body := get(t, srv.URL+"/runs/"+last[0].ID); strings.Contains(body, `id="pruned"`) || !strings.Contains(body, "data-chart=") {
			t.Errorf("a result with its samples: pruned note %v, charts %v", strings.Contains(body, `id="pruned"`), strings.Contains(body, "data-chart="))
		}
	})
}
