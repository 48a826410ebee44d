package collector

import (
	"bytes"
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/wire"
)

// seedVerdicts stores nginx runs the server limited and kangle runs, 20 %
// faster, that the load generator limited.
func seedVerdicts(t *testing.T, s *Store) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	var batch []Incoming
	for range 10 {
		n := fakeResult(rng, "lab", "pi-1", map[string]string{"server": "nginx"}, at, 1000+rng.Float64()*20, 800)
		for i := range n.Runs {
			n.Runs[i].Verdict = &wire.Verdict{LimitedBy: "server", Valid: true, Reasons: []string{"nginx at 99 % of one core"}}
		}
		k := fakeResult(rng, "lab", "pi-1", map[string]string{"server": "kangle"}, at.Add(time.Second), 1200+rng.Float64()*20, 650)
		for i := range k.Runs {
			k.Runs[i].Verdict = &wire.Verdict{LimitedBy: "generator", Reasons: []string{"edgebench itself used 99 % of one core"}}
		}
		batch = append(batch, incoming(t, n), incoming(t, k))
		at = at.Add(time.Minute)
	}
	if _, err := s.Ingest(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
}

// compare counts the runs that are not valid, says so, leaves them out on
// demand, and states no difference against runs the generator limited.
func TestCompareVerdicts(t *testing.T) {
	eachEngine(t, func(t *testing.T, e storeEngine) {
		ctx := context.Background()
		s := e.open(t)
		seedVerdicts(t, s)
		c, err := s.Compare(ctx, CompareOptions{By: "server", Base: "nginx"})
		if err != nil || len(c.Tables) != 1 || len(c.Tables[0].Groups) != 2 {
			t.Fatal(c, err)
		}
		n, k := c.Tables[0].Groups[0], c.Tables[0].Groups[1]
		if n.Invalid != 0 || n.GeneratorBound != 0 || k.Invalid != k.N || k.GeneratorBound != k.N || k.N == 0 {
			t.Errorf("nginx %d/%d, kangle %d/%d of %d", n.Invalid, n.GeneratorBound, k.Invalid, k.GeneratorBound, k.N)
		}
		if d := k.Deltas["rps"]; d.Significant || !strings.Contains(d.Note, "load generator") {
			t.Errorf("a difference against generator-bound runs: %+v", d)
		}
		var out bytes.Buffer
		c.WriteText(&out)
		if !strings.Contains(out.String(), "runs not valid by their verdict") || !strings.Contains(out.String(), "--exclude-invalid") {
			t.Errorf("compare does not flag the invalid runs:\n%s", out.String())
		}
		c, err = s.Compare(ctx, CompareOptions{By: "server", Filter: Filter{ExcludeInvalid: true}})
		if err != nil || len(c.Tables) != 1 || len(c.Tables[0].Groups) != 1 || c.Tables[0].Groups[0].Key != "nginx" {
			t.Fatalf("--exclude-invalid: %+v %v", c, err)
		}
	})
}

// The fleet page lists each run's verdict, the run page states it and
// puts it in the report after the throughput; old results show none.
func TestWebShowsVerdicts(t *testing.T) {
	eachEngine(t, func(t *testing.T, e storeEngine) {
		srv, s := newTestWeb(t, e)
		seedVerdicts(t, s)
		code, fleet := get(t, srv.URL+"/")
		if code != 200 || !strings.Contains(fleet, "NOT VALID: generator") || !strings.Contains(fleet, ">server<") {
			t.Errorf("fleet page %d lacks the verdicts:\n%s", code, fleet)
		}
		rows, err := s.Runs(context.Background(), Filter{Limit: 100})
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
