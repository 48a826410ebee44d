package web

import (
	"context"
	"encoding/json"
	"html"
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/wire"
)

// capacitySearch is a search as a device sends it: trials out of rate
// order (ramp, bisection, a re-measure, the final one) and an SLO on p99
// and p99.9.
func capacitySearch() *wire.Capacity {
	return &wire.Capacity{SLO: "p99<50ms,p99.9<200ms,errors<0.1%", CapacityRPS: 700, LimitedBy: "slo", Tolerance: 0.05, Confirmed: true,
		Answer: "700 req/s (700 req/s met the SLO and 750 req/s did not)",
		Trials: []wire.CapacityTrial{
			{Kind: "ramp", OfferedRPS: 400, AchievedRPS: 400, Requests: 1200, P50US: 1_000, P99US: 4_000, P999US: 9_000, Pass: true},
			{Kind: "ramp", OfferedRPS: 800, AchievedRPS: 610, Requests: 1830, P50US: 30_000, P99US: 250_000, P999US: 400_000},
			{Kind: "recheck", OfferedRPS: 800, AchievedRPS: 620, Requests: 1860, P50US: 28_000, P99US: 240_000, P999US: 390_000},
			{Kind: "bisect", OfferedRPS: 600, AchievedRPS: 600, Requests: 1800, P50US: 2_000, P99US: 20_000, P999US: 60_000, Pass: true},
			{Kind: "bisect", OfferedRPS: 750, AchievedRPS: 740, Requests: 2220, P50US: 9_000, P99US: 70_000, P999US: 150_000},
			{Kind: "final", OfferedRPS: 700, AchievedRPS: 700, Requests: 6300, P50US: 4_000, P99US: 41_000, P999US: 120_000, Pass: true},
		}}
}

// TestCapacityCharts: each trial's figures land at its offered rate, in
// its unit (ms, req/s), the SLO's latency bounds are flat lines at their
// value, and errors (not a latency) draw none.
func TestCapacityCharts(t *testing.T) {
	charts := CapacityCharts(capacitySearch())
	lat, rate, errs := capacityChartsOf(t, charts)
	wantX := []float64{400, 600, 700, 750, 800, 800}
	if !equalFloats(lat.X, wantX) || !equalFloats(rate.X, wantX) || !equalFloats(errs.X, wantX) || lat.Unit != "ms" || rate.Unit != "req/s" || errs.Unit != "%" {
		t.Fatalf("x %v, %v and %v in %s, %s and %s: want the offered rates in order %v", lat.X, rate.X, errs.X, lat.Unit, rate.Unit, errs.Unit, wantX)
	}
	series := seriesValues(lat, rate, errs)
	for name, want := range map[string][]float64{
		"p50":             {1, 2, 4, 9, 30, 28},
		"p99":             {4, 20, 41, 70, 250, 240},
		"p99.9":           {9, 60, 120, 150, 400, 390},
		"SLO p99<50ms":    {50, 50, 50, 50, 50, 50},
		"SLO p99.9<200ms": {200, 200, 200, 200, 200, 200},
		"achieved":        {400, 600, 700, 740, 610, 620},
		"offered":         {400, 600, 700, 750, 800, 800},
		"goodput":         {400, 600, 700, 740, 610, 620}, // no error
		"failed":          {0, 0, 0, 0, 0, 0},
		"errors":          {0, 0, 0, 0, 0, 0},
		"SLO errors<0.1%": {0.1, 0.1, 0.1, 0.1, 0.1, 0.1},
	} {
		if !equalFloats(series[name], want) {
			t.Errorf("%s: %v, want %v", name, series[name], want)
		}
	}
	if len(series) != 11 {
		t.Errorf("series %v: want p50, p99, p99.9, the two SLO bounds, offered, achieved, goodput, failed, errors and its SLO bound", series)
	}
	if CapacityCharts(nil) != nil || CapacityCharts(&wire.Capacity{}) != nil {
		t.Error("charts for a result without a search")
	}
}

// capacityChartsOf reads the three capacity charts: latency, rate and
// errors.
func capacityChartsOf(t *testing.T, charts []string) (lat, rate, errs lineSpec) {
	t.Helper()
	if len(charts) != 3 {
		t.Fatalf("%d charts, want latency, rate and errors", len(charts))
	}
	for i, c := range []*lineSpec{&lat, &rate, &errs} {
		if err := json.Unmarshal([]byte(charts[i]), c); err != nil {
			t.Fatal(err)
		}
	}
	return lat, rate, errs
}

// seriesValues maps each series' name to its values, NaN for a gap.
func seriesValues(charts ...lineSpec) map[string][]float64 {
	series := map[string][]float64{}
	for _, c := range charts {
		for _, s := range c.Series {
			for _, v := range s.Values {
				if v == nil {
					series[s.Name] = append(series[s.Name], math.NaN())
					continue
				}
				series[s.Name] = append(series[s.Name], *v)
			}
		}
	}
	return series
}

// TestCapacityChartsShowErrors: a trial whose server answered half of
// the requests with 503 achieves the offered rate and sits on the
// diagonal of achieved against offered; its goodput (successful responses
// per second) is half of it, its failed requests the other half, and the
// errors chart says 50 %, against the SLO's bounds on errors and
// timeouts. A trial of timeouts shows them in both; one in which no
// request ended is a gap in goodput, failed and errors.
func TestCapacityChartsShowErrors(t *testing.T) {
	c := &wire.Capacity{SLO: "p99<50ms,errors<1%,timeouts<0.5%", CapacityRPS: 400, LimitedBy: "slo", Answer: "400 req/s",
		Trials: []wire.CapacityTrial{
			{Kind: "ramp", OfferedRPS: 800, AchievedRPS: 800, Requests: 2400, Errors: 1200, P50US: 300, P99US: 900, MaxUS: 2_000},
			{Kind: "ramp", OfferedRPS: 400, AchievedRPS: 400, Requests: 1200, Errors: 3, P50US: 500, P99US: 4_000, MaxUS: 9_000, Pass: true},
			{Kind: "bisect", OfferedRPS: 600, AchievedRPS: 540, Requests: 1620, Errors: 162, Timeouts: 81, P50US: 800, P99US: 60_000, MaxUS: 90_000},
			{Kind: "bisect", OfferedRPS: 700, AchievedRPS: 0, Requests: 0},
		}}
	lat, rate, errs := capacityChartsOf(t, CapacityCharts(c))
	if want := []float64{400, 600, 700, 800}; !equalFloats(rate.X, want) || !equalFloats(errs.X, want) || !equalFloats(lat.X, want) {
		t.Fatalf("x %v %v %v, want %v", lat.X, rate.X, errs.X, want)
	}
	series := seriesValues(lat, rate, errs)
	nan := math.NaN()
	for name, want := range map[string][]float64{
		"offered":           {400, 600, 700, 800},
		"achieved":          {400, 540, 0, 800},
		"goodput":           {399, 486, nan, 400},
		"failed":            {1, 54, nan, 400},
		"errors":            {0.25, 10, nan, 50},
		"timeouts":          {0, 5, nan, 0},
		"SLO errors<1%":     {1, 1, 1, 1},
		"SLO timeouts<0.5%": {0.5, 0.5, 0.5, 0.5},
		"p99":               {4, 60, nan, 0.9},
		"SLO p99<50ms":      {50, 50, 50, 50},
	} {
		if !sameFloats(series[name], want) {
			t.Errorf("%s: %v, want %v", name, series[name], want)
		}
	}
	// Goodput and failed add up to the achieved rate.
	for i, a := range series["achieved"] {
		if g, f := series["goodput"][i], series["failed"][i]; !math.IsNaN(g) && math.Abs(g+f-a) > 0.002 {
			t.Errorf("trial at %v: goodput %v + failed %v != achieved %v", rate.X[i], g, f, a)
		}
	}
	if len(series) != 11 {
		t.Errorf("series %v", series)
	}
}

// sameFloats is equalFloats with NaN equal to NaN.
func sameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
			return false
		}
	}
	return true
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestCapacityRunPageInChromium: the run page of a capacity result says
// the answer and draws the search, a point per trial, in Chromium.
func TestCapacityRunPageInChromium(t *testing.T) {
	bin := chromium(t)
	srv, s := newTestWeb(t, storetest.SQLite)
	rng := rand.New(rand.NewPCG(5, 6))
	r := storetest.FakeResult(rng, "lab", "pi-1", map[string]string{"server": "nginx"}, time.Date(2025, 3, 4, 12, 0, 0, 0, time.UTC), 700, 800)
	r.Kind, r.Spec.Mode, r.Spec.Rate = wire.KindCapacity, "capacity", 0
	r.Capacity = capacitySearch()
	if _, err := s.Ingest(context.Background(), []store.Incoming{storetest.Incoming(t, r)}); err != nil {
		t.Fatal(err)
	}
	dom := browse(t, bin, srv.URL+"/runs/"+r.ID, "run-capacity")
	if !strings.Contains(html.UnescapeString(dom), r.Capacity.Answer) {
		t.Errorf("run page: no answer %q", r.Capacity.Answer)
	}
	sec := regexp.MustCompile(`(?s)<div class="charts" id="capacity-charts">.*?</div></div>`).FindString(dom)
	drawn := regexp.MustCompile(`data-rendered="(\d+)"`).FindAllStringSubmatch(sec, -1)
	if len(drawn) != 3 {
		t.Fatalf("capacity charts drawn: %d, want 3\n%.1500s", len(drawn), dom)
	}
	// latency: 3 percentiles and 2 bounds; rate: offered, achieved,
	// goodput and failed; errors: its % and its bound.
	for i, want := range []int{5 * 6, 4 * 6, 2 * 6} {
		if n, _ := strconv.Atoi(drawn[i][1]); n != want {
			t.Errorf("capacity chart %d drew %d points, want %d", i, n, want)
		}
	}
	checkAxes(t, "capacity run", dom)
}
