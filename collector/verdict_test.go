package collector

import (
	"context"
	"strings"
	"testing"

	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/storetest"
)

// The fleet page lists each run's verdict, the run page states it and
// puts it in the report after the throughput; old results show none.
func TestWebShowsVerdicts(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		srv, s := newTestWeb(t, e)
		storetest.SeedVerdicts(t, s)
		code, fleet := get(t, srv.URL+"/")
		if code != 200 || !strings.Contains(fleet, "NOT VALID: generator") || !strings.Contains(fleet, ">server<") {
			t.Errorf("fleet page %d lacks the verdicts:\n%s", code, fleet)
		}
		rows, err := s.Runs(context.Background(), store.Filter{Limit: 100})
		if err != nil || s.AddVerdicts(context.Background(), rows) != nil {
			t.Fatal(err)
		}
		var gen, old string
		for _, r := range rows {
			switch r.Verdict {
			case "NOT VALID: generator":
				gen = r.ID
			case "":
				old = r.ID
			}
		}
		if gen == "" || old == "" {
			t.Fatalf("rows lack a generator-bound or an old result: %+v", rows)
		}
		_, page := get(t, srv.URL+"/runs/"+gen)
		if !strings.Contains(page, `<p id="verdict" class="warn">NOT VALID, limited by generator: edgebench itself used 99 % of one core</p>`) ||
			!strings.Contains(page, "  verdict     NOT VALID, limited by generator") {
			t.Errorf("run page lacks the verdict:\n%s", page)
		}
		code, page = get(t, srv.URL+"/runs/"+old)
		if code != 200 || strings.Contains(page, "verdict") {
			t.Errorf("an old result's page %d shows a verdict", code)
		}
	})
}
