package report

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestSpreadOfPositiveFiguresStaysPositive is issue 28's item 6: the
// p50 of three runs, 130, 140 and 1,400 us, had the mean's interval
// [-1257.81, 2371.14] us (mean ± t·s/√n): a latency below zero. On the
// logarithms the interval is the geometric mean's, and positive.
func TestSpreadOfPositiveFiguresStaysPositive(t *testing.T) {
	s := spreadOf([]float64{130, 140, 1400})
	if s.CIOf != "geomean" || s.CILow <= 0 || s.CILow > s.Min || s.CIHigh <= s.GeoMean || s.GeoMean <= s.CILow {
		t.Errorf("130, 140, 1400: %+v; want a positive interval of the geometric mean", s)
	}
	if want := math.Cbrt(130 * 140 * 1400); math.Abs(s.GeoMean-want) > 1e-9*want {
		t.Errorf("geometric mean %v, want %v", s.GeoMean, want)
	}
	// 100, 1000, 10000: logarithms ln(1000) ± ln(10), so the geometric
	// mean is 1000 and the interval 1000 / f .. 1000 x f with f =
	// exp(4.303 x ln(10) / √3).
	s = spreadOf([]float64{100, 1000, 10000})
	f := math.Exp(4.303 * math.Ln10 / math.Sqrt(3))
	if math.Abs(s.GeoMean-1000) > 1e-9 || math.Abs(s.CILow-1000/f) > 1e-6 || math.Abs(s.CIHigh-1000*f) > 1e-3 {
		t.Errorf("100, 1000, 10000: geo %v [%v, %v], want 1000 [%v, %v]", s.GeoMean, s.CILow, s.CIHigh, 1000/f, 1000*f)
	}
	if s.Mean != 3700 || s.Min != 100 || s.Max != 10000 {
		t.Errorf("mean %v, min %v, max %v: want the figures' own", s.Mean, s.Min, s.Max)
	}
	// Any positive figures, however spread and however few.
	rng := rand.New(rand.NewPCG(28, 6))
	for range 2000 {
		xs := make([]float64, 2+rng.IntN(8))
		for i := range xs {
			xs[i] = math.Exp(rng.NormFloat64()*3) * 1000
		}
		s := spreadOf(xs)
		if !(s.CILow > 0 && s.CILow <= s.GeoMean && s.GeoMean <= s.CIHigh) || s.CIOf != "geomean" {
			t.Fatalf("%v: %+v", xs, s)
		}
	}
	// One figure: no spread, an interval of that figure.
	if s := spreadOf([]float64{42}); s.CILow != 42 || s.CIHigh != 42 || s.GeoMean != 42 {
		t.Errorf("one run: %+v", s)
	}
	// A run of 0 req/s: no logarithm; the mean's interval, clamped at 0.
	s = spreadOf([]float64{0, 10, 2000})
	if s.CIOf != "mean" || s.CILow != 0 || s.CIHigh <= s.Mean || s.GeoMean != 0 {
		t.Errorf("0, 10, 2000: %+v; want the mean's interval from 0", s)
	}
}

// TestRepeatIntervalsStayPositive: --repeat's intervals of req/s, p50
// and p99 over runs whose figures are all positive are positive, for the
// witness of issue 28 (a p50 of 130, 140 and 1,400 us) and runs of any
// spread.
func TestRepeatIntervalsStayPositive(t *testing.T) {
	run := func(rps float64, p50, p99 int64) *LoadResult {
		h := NewLatencyHistogram()
		for i := range 100 {
			h.Record(p50)
			if i == 99 {
				h.Record(p99)
			}
		}
		return &LoadResult{Completed: int64(rps * 10), Duration: 10 * time.Second, Latency: h}
	}
	rng := rand.New(rand.NewPCG(28, 1))
	sets := [][]*LoadResult{{run(30000, 130, 2000), run(31000, 140, 2100), run(9000, 1400, 90000)}}
	for range 200 {
		var runs []*LoadResult
		for range 2 + rng.IntN(5) {
			f := math.Exp(rng.NormFloat64() * 2)
			runs = append(runs, run(1000*f, int64(100*f)+1, int64(5000*f)+1))
		}
		sets = append(sets, runs)
	}
	for _, runs := range sets {
		s := Summarize(runs)
		for name, sp := range map[string]Spread{"req/s": s.RPS, "p50": s.P50, "p99": s.P99} {
			if sp.CILow <= 0 || sp.CIHigh < sp.CILow {
				t.Fatalf("%s over %d runs (%v .. %v): interval [%.2f, %.2f]", name, len(runs), sp.Min, sp.Max, sp.CILow, sp.CIHigh)
			}
		}
	}
}

// TestSummarizeLeavesOutRunsWithoutLatency: a run in which no response
// completed has no p50 or p99; its 0 is in no spread of latency, and a
// spread of no run says none.
func TestSummarizeLeavesOutRunsWithoutLatency(t *testing.T) {
	withLatency := func(us int64) *LoadResult {
		h := NewLatencyHistogram()
		for range 100 {
			h.Record(us)
		}
		return &LoadResult{Completed: 100, Duration: time.Second, Latency: h}
	}
	flowing := &LoadResult{Duration: time.Second, Bytes: 1 << 20, Latency: NewLatencyHistogram()}
	s := Summarize([]*LoadResult{withLatency(1000), flowing, withLatency(2000)})
	if s.Runs != 3 || s.P50.Min != 1000 || s.P50.Max != 2000 || s.P50.CIOf != "geomean" || s.P50.CILow <= 0 {
		t.Errorf("p50 %+v over %d runs: want the two runs with a latency", s.P50, s.Runs)
	}
	if s.RPS.Min != 0 || s.RPS.CIOf != "mean" || s.RPS.CILow != 0 {
		t.Errorf("req/s %+v: the run of 0 req/s is a figure, the interval the mean's from 0", s.RPS)
	}
	if s := Summarize([]*LoadResult{flowing, flowing}); s.P99.CIOf != "" || s.P99.Mean != 0 {
		t.Errorf("no run with a latency: p99 %+v, want none", s.P99)
	}
}
