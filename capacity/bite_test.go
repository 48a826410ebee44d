package capacity

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/edgebench/edgebench/loadgen/report"
)

// step is a server that meets p99<50ms up to rate req/s and misses it
// above: every request 1ms below, 100ms above.
func step(rate float64) func(Trial) Observation {
	return func(t Trial) Observation {
		h := report.NewLatencyHistogram()
		us := int64(1000)
		if t.Rate > rate {
			us = 100_000
		}
		for range 1000 {
			h.Record(us)
		}
		return Observation{Offered: t.Rate, Achieved: t.Rate, Requests: 1000, Latency: h, GeneratorCPU: -1, ServerCPU: -1}
	}
}

// run is a search of cfg on server to its end, and the time its trials
// took (warm-ups included).
func run(t *testing.T, cfg Config, server func(Trial) Observation) (Result, time.Duration) {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var spent time.Duration
	for i := 0; ; i++ {
		tr, ok := s.Next()
		if !ok {
			break
		}
		if i > 200 {
			t.Fatal("the search does not end")
		}
		spent += tr.Warmup + tr.Duration
		if _, err := s.Observe(server(tr)); err != nil {
			t.Fatal(err)
		}
	}
	return s.Result(), spent
}

func rates(r Result) []float64 {
	var out []float64
	for _, rec := range r.Records {
		out = append(out, rec.Rate)
	}
	return out
}

// Goodput is read under the tightest of the SLO's latency bounds,
// whichever comes first, the bound itself inside it, the failed
// responses outside.
func TestGoodputUnderTheTightestBound(t *testing.T) {
	h := report.NewLatencyHistogram()
	for range 600 {
		h.Record(10_000) // at the tightest bound: inside
	}
	for range 390 {
		h.Record(30_000)
	}
	for range 10 {
		h.Record(100_000)
	}
	o := Observation{Offered: 100, Achieved: 100, Requests: 1000, Latency: h, GeneratorCPU: -1}
	for _, slo := range []string{"p50<10ms,p99<50ms", "p99<50ms,p50<10ms", "max<1s,p99<50ms,p50<10ms,errors<1%"} {
		j := Judge(mustSLO(t, slo), o)
		if j.Goodput != 0.6 {
			t.Errorf("%s: goodput %v, want 0.6 (within 10ms)", slo, j.Goodput)
		}
	}
	// Ten responses that failed fast (a 503 in 1ms) are outside.
	o.NotOK = 10
	if j := Judge(mustSLO(t, "p99<50ms,p50<10ms"), o); math.Abs(j.Goodput-0.59) > 1e-12 {
		t.Errorf("10 failed responses: goodput %v, want 0.59", j.Goodput)
	}
}

// The bisection stops when the bracket is within the tolerance of its
// upper end (95 and 100 at 5 %: stop), and goes on while it is wider.
func TestBisectionStoppingWidth(t *testing.T) {
	// 100 fails (twice), the ramp down by 100/95 tries 95, which passes.
	cfg := Config{SLO: SLO{{Metric: P99, Latency: 50 * time.Millisecond}}, Start: 100, Growth: 100.0 / 95, Tolerance: 0.05}
	r, _ := run(t, cfg, step(96))
	if want := []float64{100, 100, 95, 95}; !slices.Equal(rates(r), want) || r.Capacity != 95 || r.UpperBound != 100 || r.Limit != BySLO || !r.Confirmed {
		t.Errorf("95..100 at 5 %%: trials %v, capacity %v..%v %s, want trials %v and 95 confirmed", rates(r), r.Capacity, r.UpperBound, r.Limit, want)
	}
	// At 4.9 %, the same bracket is halved once: 97.5 fails.
	cfg.Tolerance = 0.049
	r, _ = run(t, cfg, step(96))
	if want := []float64{100, 100, 95, 97.5, 95}; !slices.Equal(rates(r), want) || r.Capacity != 95 || r.UpperBound != 97.5 {
		t.Errorf("95..100 at 4.9 %%: trials %v, capacity %v..%v, want trials %v", rates(r), r.Capacity, r.UpperBound, want)
	}
}

// The time budget counts each trial's warm-up, the next trial's before it
// starts: a trial that would end past the budget is not run, one that
// ends on it is.
func TestBudgetCountsTheWarmup(t *testing.T) {
	// Trials of 2 s warm-up and 5 s: 50, 100, 200, 400 end at 7, 14, 21,
	// 28 s.
	for _, c := range []struct {
		budget time.Duration
		want   []float64
	}{
		{26 * time.Second, []float64{50, 100, 200}}, // 400 would end at 28 s
		{28 * time.Second, []float64{50, 100, 200, 400}},
	} {
		r, spent := run(t, Config{SLO: mustSLO(t, "p99<50ms"), Budget: c.budget}, step(1000))
		if !slices.Equal(rates(r), c.want) || spent > c.budget || r.Limit != ByBudget || r.Capacity != c.want[len(c.want)-1] {
			t.Errorf("budget %v: trials %v (%v spent), %s capacity %v, want trials %v", c.budget, rates(r), spent, r.Limit, r.Capacity, c.want)
		}
	}
}

// The trial count limit: MaxTrials trials are run, not one more.
func TestTrialCountLimit(t *testing.T) {
	for _, n := range []int{2, 3, 5} {
		r, _ := run(t, Config{SLO: mustSLO(t, "p99<50ms"), MaxTrials: n}, step(1e9))
		if len(r.Records) != n || r.Limit != ByBudget {
			t.Errorf("at most %d trials: %d run (%v), %s", n, len(r.Records), rates(r), r.Limit)
		}
	}
}
