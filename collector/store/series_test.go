package store_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/group"
	"github.com/edgebench/edgebench/collector/series"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/seriesdb"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/wire"
)

// genSeries makes the results of one series: n results an hour apart
// from at, req/s around base with noise cv that steps (3 to 30 %, up or
// down) now and then, p99 and CPU that step with it or alone, outliers,
// runs whose verdict says NOT VALID (their figures far off), results of
// two or three runs (one of them not valid, sometimes), and the
// schedule's label on some (the same series).
func genSeries(rng *rand.Rand, fleet, device string, labels map[string]string, at time.Time, n int, base, cv float64) []*wire.Result {
	rps, p99, cpu := base, 2000.0+rng.Float64()*3000, 20+rng.Float64()*40
	var out []*wire.Result
	for range n {
		switch r := rng.Float64(); {
		case r < 0.03:
			rps *= 1 + (0.03+0.27*rng.Float64())*float64(1-2*rng.IntN(2))
		case r < 0.05:
			p99 *= 1 + (0.1+0.4*rng.Float64())*float64(1-2*rng.IntN(2))
		case r < 0.06:
			cpu = math.Min(95, cpu*(1+0.3*float64(1-2*rng.IntN(2))))
		}
		point := func(at time.Time) storetest.Point {
			p := storetest.Point{At: at, RPS: rps * (1 + cv*rng.NormFloat64()), P99US: int64(p99 * (1 + cv*rng.NormFloat64())),
				CPUPct: cpu * (1 + cv*rng.NormFloat64())}
			switch r := rng.Float64(); {
			case r < 0.03: // an outlier
				p.RPS *= 0.5 + rng.Float64()
			case r < 0.10: // not valid: the generator was the limit
				p.RPS *= 0.4
				p.Verdict = &wire.Verdict{LimitedBy: "generator"}
			case r < 0.12:
				p.Verdict = &wire.Verdict{LimitedBy: "network"}
			case r < 0.60:
				p.Verdict = &wire.Verdict{LimitedBy: "server", Valid: true}
			}
			if rng.IntN(20) == 0 {
				p.P99US = 0 // no latency figure
			}
			return p
		}
		pts := []storetest.Point{point(at)}
		for range rng.IntN(3) * rng.IntN(2) { // --repeat
			pts = append(pts, point(at.Add(time.Duration(len(pts))*15*time.Second)))
		}
		l := labels
		if rng.IntN(3) == 0 {
			l = map[string]string{group.ScheduleLabel: "hourly"}
			for k, v := range labels {
				l[k] = v
			}
		}
		out = append(out, storetest.LightResult(fleet, device, l, pts...))
		at = at.Add(time.Hour)
	}
	return out
}

// sameChange compares a stored change with the whole-series detection's:
// where, on which results and values, the figures bit for bit, what was
// left out.
func sameChange(a, b seriesdb.Change) string {
	eq := func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) }
	switch {
	case a.Series != b.Series || a.Metric != b.Metric || a.ResultID != b.ResultID || !a.At.Equal(b.At):
		return "another change"
	case !slices.Equal(a.BeforeIDs, b.BeforeIDs) || !slices.Equal(a.AfterIDs, b.AfterIDs):
		return fmt.Sprintf("other results compared: %d+%d, %d+%d", len(a.BeforeIDs), len(a.AfterIDs), len(b.BeforeIDs), len(b.AfterIDs))
	case !slices.Equal(a.BeforeValues, b.BeforeValues) || !slices.Equal(a.AfterValues, b.AfterValues):
		return "other values compared"
	case !eq(a.Before, b.Before) || !eq(a.After, b.After) || !eq(a.Pct, b.Pct) || !eq(a.LowPct, b.LowPct) || !eq(a.HighPct, b.HighPct) || !eq(a.P, b.P):
		return fmt.Sprintf("other figures: %+.3f%% p=%g, %+.3f%% p=%g", a.Pct, a.P, b.Pct, b.P)
	case a.LeftOutText() != b.LeftOutText():
		return fmt.Sprintf("left out %q, %q", a.LeftOutText(), b.LeftOutText())
	case a.Spec != b.Spec || fmt.Sprint(a.Labels) != fmt.Sprint(b.Labels) || a.Fleet != b.Fleet || a.Device != b.Device:
		return "another series' names"
	}
	return ""
}

// storedChanges are every change the store holds: the provisional claims
// and the final changes, by series and metric, oldest first.
func storedChanges(t *testing.T, s *store.Store) (final, provisional map[string][]seriesdb.Change) {
	t.Helper()
	ctx := context.Background()
	final, provisional = map[string][]seriesdb.Change{}, map[string][]seriesdb.Change{}
	cursor := ""
	for {
		cs, next, err := s.ListChanges(ctx, seriesdb.ChangeQuery{Limit: 7, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			if c.Provisional || c.Seq == 0 {
				t.Fatalf("a final change listed as %+v", c)
			}
			k := c.Series + " " + c.Metric
			final[k] = append([]seriesdb.Change{c}, final[k]...)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	prov, more, err := s.ProvisionalChanges(ctx, seriesdb.ChangeQuery{})
	if err != nil || more {
		t.Fatal(err, more)
	}
	for _, c := range prov {
		if !c.Provisional {
			t.Fatalf("a provisional claim listed as %+v", c)
		}
		k := c.Series + " " + c.Metric
		provisional[k] = append(provisional[k], c)
	}
	for _, m := range provisional {
		slices.SortFunc(m, func(a, b seriesdb.Change) int { return a.At.Compare(b.At) })
	}
	return final, provisional
}

// checkAgainstWhole checks that the store's final changes followed by
// its provisional claims are, series by series, the whole-series
// detection's changes over the stored results (series.Changes), but for
// the series in skip. It returns how many of each it compared.
func checkAgainstWhole(t *testing.T, s *store.Store, skip map[string]bool) (finals, provisionals int) {
	t.Helper()
	want, err := series.Changes(context.Background(), s, series.Options{})
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string][]seriesdb.Change{}
	for _, c := range want {
		k := c.Series + " " + c.Metric
		byKey[k] = append(byKey[k], c)
	}
	final, prov := storedChanges(t, s)
	keys := map[string]bool{}
	for _, m := range []map[string][]seriesdb.Change{byKey, final, prov} {
		for k := range m {
			keys[k] = true
		}
	}
	for k := range keys {
		if skip[strings.SplitN(k, " ", 2)[0]] {
			continue
		}
		got := append(append([]seriesdb.Change{}, final[k]...), prov[k]...)
		w := byKey[k]
		if len(got) != len(w) {
			t.Errorf("%s: %d final and %d provisional changes stored, the whole series has %d:\n%v\n%v", k, len(final[k]), len(prov[k]), len(w), got, w)
			continue
		}
		for i := range got {
			if why := sameChange(got[i], w[i]); why != "" {
				t.Errorf("%s, change %d: %s:\nstored %+v\n whole %+v", k, i, why, got[i], w[i])
			}
		}
		finals += len(final[k])
		provisionals += len(prov[k])
	}
	return finals, provisionals
}

// TestSeriesStateIsWholeSeriesDetection: a fleet's results (steps,
// outliers, runs not valid, results of several runs, the schedule's
// label, figures missing) arrive in batches of every size, some out of
// order (a result after one that started later): the changes the store
// found as they arrived, final then provisional, are those the detection
// over each whole series finds, result for result and bit for bit; each
// final change is stored once; every state stays within its bound.
func TestSeriesStateIsWholeSeriesDetection(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		rng := rand.New(rand.NewPCG(29, 1))
		start := time.Now().Add(-30 * 24 * time.Hour).Truncate(time.Hour)
		var all []*wire.Result
		for d := range 6 {
			for _, srv := range []string{"nginx", "kangle"} {
				all = append(all, genSeries(rng, "lab", fmt.Sprintf("pi-%d", d), map[string]string{"server": srv},
					start.Add(time.Duration(d)*time.Minute), 70+rng.IntN(50), 500+rng.Float64()*3000, []float64{0.01, 0.03}[rng.IntN(2)])...)
			}
		}
		slices.SortFunc(all, func(a, b *wire.Result) int { return a.Runs[0].StartedAt.Compare(b.Runs[0].StartedAt) })
		// Out of order: a result swapped with one started up to 3 later
		// (12 results of the fleet an hour: 0 to 3 of its own series').
		swapped := map[string]bool{}
		for i := range all {
			if j := i + 12*(1+rng.IntN(3)); rng.IntN(10) == 0 && j < len(all) {
				all[i], all[j] = all[j], all[i]
				swapped[all[i].ID], swapped[all[j].ID] = true, true
			}
		}
		for len(all) > 0 {
			n := min(len(all), 1+rng.IntN(40))
			var batch []store.Incoming
			for _, r := range all[:n] {
				batch = append(batch, storetest.Incoming(t, r))
			}
			if _, err := s.Ingest(ctx, batch); err != nil {
				t.Fatal(err)
			}
			all = all[n:]
		}
		late := map[string]bool{}
		var keys []string
		devs, _ := s.Devices(ctx)
		for _, d := range devs {
			hs, err := s.SeriesHistories(ctx, wire.Addr{Fleet: d.Fleet, Device: d.ID})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hs {
				in, err := s.Series(ctx, h.Key)
				if err != nil {
					t.Fatal(err)
				}
				if in.Results != int64(len(h.Results)) {
					t.Errorf("%s: %d results counted, %d stored", h.Key, in.Results, len(h.Results))
				}
				if in.Late > 0 {
					late[h.Key] = true
				}
				for m, n := range in.Values {
					if n > 30+2*8-2 {
						t.Errorf("%s: %d values of %s held", h.Key, n, seriesdb.SeriesMetrics()[m])
					}
				}
				keys = append(keys, h.Key)
			}
		}
		if len(keys) != 12 || len(late) > 2 {
			t.Fatalf("%d series, %d with results too late to take in: %v", len(keys), len(late), late)
		}
		finals, provisional := checkAgainstWhole(t, s, late)
		t.Logf("%d series, %d results out of order, %d series with one too late; %d final changes and %d provisional claims as the whole series",
			len(keys), len(swapped), len(late), finals, provisional)
		if finals < 20 {
			t.Errorf("only %d final changes: the series should hold more", finals)
		}
	})
}
