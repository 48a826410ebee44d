package report

import "testing"

// rank is the 1-based rank of percentile p (in hundredths of a percent,
// 9990 for p99.9) among n values: the smallest r with r/n >= p/100, in
// whole numbers, so that no rounding of a float decides it.
func rank(pBP, n int64) int64 {
	return max((pBP*n+9999)/10000, 1)
}

// TestQuantilesExact pins the percentiles without golden files: of the
// values 1..100, each percentile the reports print is the value at its
// rank; of 10,000 values where the rank falls between two values, the
// lower one when the rank is exactly a whole number of values.
func TestQuantilesExact(t *testing.T) {
	h := NewLatencyHistogram()
	for v := int64(1); v <= 100; v++ {
		h.Record(v)
	}
	for _, p := range Percentiles {
		pBP := int64(p*100 + 0.5)
		if got, want := h.Quantile(p/100), rank(pBP, 100); got != want {
			t.Errorf("p%v of 1..100: %d, want %d", p, got, want)
		}
	}
	for q, want := range map[float64]int64{0: 1, 0.001: 1, 0.01: 1, 0.011: 2, 0.5: 50, 0.505: 51, 0.995: 100, 1: 100} {
		if got := h.Quantile(q); got != want {
			t.Errorf("quantile %v of 1..100: %d, want %d", q, got, want)
		}
	}
	if h.Min() != 1 || h.Max() != 100 || h.Count() != 100 || h.Mean() != 50.5 {
		t.Errorf("min %d max %d count %d mean %v, want 1 100 100 50.5", h.Min(), h.Max(), h.Count(), h.Mean())
	}

	// A value in a bucket wider than 1: no percentile is above it, the
	// largest recorded.
	h = NewLatencyHistogram()
	h.Record(123_457)
	for _, q := range []float64{0, 0.5, 1} {
		if got := h.Quantile(q); got != 123_457 {
			t.Errorf("quantile %v of one value 123457: %d", q, got)
		}
	}

	// 9,990 values of 10 and 10 of 20: the 99.9th percentile of 10,000 is
	// the 9,990th value, 10; a hair above it is 20. 0.999 x 10,000 is
	// 9990.000000000002 in floats: the rank must not round up to 9,991.
	h = NewLatencyHistogram()
	recordN(h, 10, 9990)
	recordN(h, 20, 10)
	for _, tc := range []struct {
		q    float64
		want int64
	}{{0.999, 10}, {0.9991, 20}, {0.99, 10}, {0.9999, 20}, {1, 20}} {
		if got := h.Quantile(tc.q); got != tc.want {
			t.Errorf("quantile %v of 9,990 x 10 and 10 x 20: %d, want %d", tc.q, got, tc.want)
		}
	}
	for _, n := range []int64{3, 7, 1000, 10000, 1_000_000} {
		h := NewLatencyHistogram()
		recordN(h, 1, n-1)
		recordN(h, 2, 1)
		for _, p := range Percentiles {
			pBP := int64(p*100 + 0.5)
			want := int64(1)
			if rank(pBP, n) == n {
				want = 2
			}
			if got := h.Quantile(p / 100); got != want {
				t.Errorf("p%v of %d values (the last one 2): %d, want %d", p, n, got, want)
			}
		}
	}
}

func recordN(h *Histogram, v, n int64) {
	for range n {
		h.Record(v)
	}
}
