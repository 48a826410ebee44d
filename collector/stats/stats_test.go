package stats

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestMannWhitneyU(t *testing.T) {
	tests := []struct {
		name  string
		x, y  []float64
		u, p  float64
		exact bool
	}{
		// scipy.stats.mannwhitneyu's documented example (method="exact"):
		// U1 = 17, p = 0.1111111111111111. By hand: U has C(9,4) = 126
		// equally likely arrangements; P(U >= 17) = P(U <= 3) = 7/126.
		{"scipy males/females", []float64{19, 22, 16, 29, 24}, []float64{20, 11, 17, 12}, 17, 14.0 / 126, true},
		// Complete separation of 5 and 5: U = 0, p = 2 / C(10,5) = 2/252.
		{"separated 5+5", []float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 0, 2.0 / 252, true},
		// Ties force the normal approximation. Midranks 1, 3, 3, 5.5 give
		// R1 = 12.5 and U = 2.5; tie term (27-3)+(8-2) = 30; variance
		// 16/12 * (9 - 30/56) = 11.2857; z = (|2.5-8| - 0.5)/sqrt(var)
		// = 1.48835; p = erfc(z/sqrt 2) = 0.13665824773814753.
		{"ties", []float64{1, 2, 2, 3}, []float64{2, 3, 4, 5}, 2.5, 0.13665824773814753, false},
		{"all equal", []float64{3, 3, 3}, []float64{3, 3, 3}, 4.5, 1, false},
		{"empty", nil, []float64{1}, 0, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := MannWhitneyU(tt.x, tt.y)
			if r.U != tt.u || !near(r.P, tt.p, 1e-12) || r.Exact != tt.exact {
				t.Errorf("got U=%v p=%.17g exact=%v, want U=%v p=%.17g exact=%v", r.U, r.P, r.Exact, tt.u, tt.p, tt.exact)
			}
		})
	}
}

func TestNormalPMatchesScipyAsymptotic(t *testing.T) {
	// scipy's documented asymptotic p for the males/females example:
	// z = (17 - 10 - 0.5) / sqrt(5*4*10/12), p = 0.11134688653314041.
	if p := normalP(5, 4, 17, 0); !near(p, 0.11134688653314041, 1e-12) {
		t.Errorf("normalP = %.17g", p)
	}
}

func TestUDistSymmetricAndComplete(t *testing.T) {
	for _, c := range [][2]int{{1, 1}, {3, 4}, {5, 5}, {7, 2}, {20, 20}} {
		dist, total := uDist(c[0], c[1])
		if len(dist) != c[0]*c[1]+1 || !near(total, binom(c[0]+c[1], c[0]), total*1e-12) {
			t.Fatalf("%v: len %d total %v", c, len(dist), total)
		}
		for i := range dist {
			if dist[i] != dist[len(dist)-1-i] {
				t.Fatalf("%v: not symmetric at %d", c, i)
			}
		}
	}
	// Partitions of u into at most 5 parts of at most 4, by hand.
	dist, _ := uDist(5, 4)
	for u, want := range []float64{1, 1, 2, 3, 5, 6} {
		if dist[u] != want {
			t.Errorf("f(5,4,%d) = %v, want %v", u, dist[u], want)
		}
	}
}

func TestExactAndNormalAgreeForLargerSamples(t *testing.T) {
	var x, y []float64
	for i := range 20 {
		x = append(x, float64(2*i))
		y = append(y, float64(2*i)+7.5)
	}
	r := MannWhitneyU(x, y)
	if !r.Exact {
		t.Fatal("want exact")
	}
	if pn := normalP(20, 20, r.U, 0); !near(r.P, pn, 0.01) {
		t.Errorf("exact %v vs normal %v", r.P, pn)
	}
}

func TestHodgesLehmann(t *testing.T) {
	// Differences y - x of 1..5 vs 6..10 run from 1 to 9 (value v
	// 5-|v-5| times), median 5. For 5+5, P(U <= 2) = 4/252 <= 0.025 <
	// P(U <= 3) = 7/252, so k = 3: the 3rd smallest (2) and the 3rd
	// largest (8) differences.
	shift, lo, hi, ok := HodgesLehmann([]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 0.95)
	if !ok || shift != 5 || lo != 2 || hi != 8 {
		t.Errorf("got %v [%v %v] ok=%v, want 5 [2 8]", shift, lo, hi, ok)
	}
	if k := mosesK(5, 5, 0.025); k != 3 {
		t.Errorf("mosesK(5,5) = %d, want 3", k)
	}
	// 3+3: the most extreme arrangement already has P = 1/20 > 0.025.
	if _, _, _, ok := HodgesLehmann([]float64{1, 2, 3}, []float64{4, 5, 6}, 0.95); ok {
		t.Error("3+3 runs cannot give a 95 % interval")
	}
	// Normal-approximation k for large samples is close to the exact one.
	if ke, kn := mosesK(20, 20, 0.025), int(math.Floor(200-normalQuantile(0.975)*math.Sqrt(400*41.0/12))); ke < kn-2 || ke > kn+2 {
		t.Errorf("exact k %d vs normal %d", ke, kn)
	}
}

func TestNormalQuantile(t *testing.T) {
	if q := normalQuantile(0.975); !near(q, 1.959963984540054, 1e-9) {
		t.Errorf("q(0.975) = %v", q)
	}
}

func TestCompare(t *testing.T) {
	base := []float64{100, 101, 99, 100.5, 100.2}
	other := []float64{110, 111, 109, 110.4, 112}
	d := Compare(base, other)
	if !d.Significant || d.P != 2.0/252 {
		t.Fatalf("want significant at p=2/252, got %+v", d)
	}
	if !near(d.Pct, 10, 0.5) || !(d.LowPct < d.Pct && d.Pct < d.HighPct) || d.LowPct <= 0 {
		t.Errorf("pct %v [%v %v]", d.Pct, d.LowPct, d.HighPct)
	}
	if v := d.Verdict(); !strings.HasPrefix(v, "+") || !strings.HasSuffix(v, "%") {
		t.Errorf("verdict %q", v)
	}

	noisy := Compare([]float64{100, 90, 110, 105, 95}, []float64{101, 91, 108, 104, 97})
	if noisy.Significant || noisy.Verdict() != "~" {
		t.Errorf("noise called significant: %+v", noisy)
	}

	few := Compare([]float64{1, 2, 3}, []float64{10, 11, 12})
	if few.Significant || few.Note == "" || few.Verdict() != "~" {
		t.Errorf("3+3 runs: %+v", few)
	}

	absent := Compare([]float64{math.NaN(), 1, 2, 3, 4}, []float64{5, 6, 7, 8})
	if absent.N1 != 4 {
		t.Errorf("NaN counted: n1=%d", absent.N1)
	}
	if s := Compare(nil, base); s.Note == "" || s.Significant {
		t.Errorf("empty base: %+v", s)
	}
}

func TestSummarize(t *testing.T) {
	s := Describe([]float64{2, 4, 4, 4, 5, 5, 7, 9})
	if s.N != 8 || s.Mean != 5 || s.Median != 4.5 || s.Min != 2 || s.Max != 9 || !near(s.StdDev, 2.138089935, 1e-8) {
		t.Errorf("%+v", s)
	}
	// t(7) = 2.365: half width 2.365 * 2.138 / sqrt 8.
	if !near(s.CIHigh-s.Mean, 2.365*s.StdDev/math.Sqrt(8), 1e-9) {
		t.Errorf("ci %v", s.CIHigh-s.Mean)
	}
	if e := Describe(nil); e.N != 0 || !math.IsNaN(e.Mean) {
		t.Errorf("empty: %+v", e)
	}
}

// TestSummarizeMedianInterval: the interval of the median is two of the
// values (the order statistics benchstat uses), so for positive values it
// is positive however they spread; with fewer than 6 there is none.
func TestSummarizeMedianInterval(t *testing.T) {
	n := medianCIRuns()
	if n != 6 {
		t.Errorf("medianCIRuns() = %d, want 6 (benchstat: need >= 6 samples)", n)
	}
	if n != MedianCIRuns {
		t.Errorf("MedianCIRuns = %d, the computed value %d", MedianCIRuns, n)
	}
	five := Describe([]float64{5, 1, 4, 2, 3})
	if !math.IsNaN(five.MedianLow) || !math.IsNaN(five.MedianHigh) {
		t.Errorf("5 values: %+v", five)
	}
	// n = 6: P(all six on one side of the median) = 2/64 < 5 %: [min, max].
	six := Describe([]float64{6, 1, 5, 2, 4, 3})
	if six.MedianLow != 1 || six.MedianHigh != 6 || six.Median != 3.5 {
		t.Errorf("6 values: %+v", six)
	}
	// n = 10: the 2nd and 9th values (P(X <= 1) = 11/1024, twice 2.1 %).
	ten := Describe([]float64{10, 1, 9, 2, 8, 3, 7, 4, 6, 5})
	if ten.MedianLow != 2 || ten.MedianHigh != 9 {
		t.Errorf("10 values: %+v", ten)
	}
	// The pooled group of the issue: req/s of three runs of one page and
	// one of a slow page. The mean's t interval reaches below zero (the
	// "±106.7 %" users saw); the median's is two of the values, never.
	if pooled := Describe([]float64{1010, 1003, 998, 40}); pooled.CILow >= 0 {
		t.Errorf("the mean's interval of the pooled runs: [%v, %v]", pooled.CILow, pooled.CIHigh)
	}
	pooled := Describe([]float64{1010, 1003, 998, 40, 1005, 45})
	if pooled.MedianLow != 40 || pooled.MedianHigh != 1010 || pooled.Sum != 4101 {
		t.Errorf("pooled: %+v", pooled)
	}
}

// TestCompareIsARatio pins the change in % by hand. A doubling: base 1, 2,
// 4, 8, 16 against 2, 4, 8, 16, 32. The log2 ratios log2(y[j] / x[i]) are
// 1 + j - i, from -3 to 5 (value v 5 - |v - 1| times): their median is 1
// (a ratio of 2: +100 %), and for 5 + 5 runs Moses' bounds are the 3rd
// smallest (-2: a ratio of 1/4, -75 %) and the 3rd largest (4: 16,
// +1500 %). The shift of the raw figures in % of the base median said
// +75 % [-200 % +700 %]: a fall of twice the whole.
func TestCompareIsARatio(t *testing.T) {
	d := Compare([]float64{1, 2, 4, 8, 16}, []float64{2, 4, 8, 16, 32})
	if d.PctOf != PctOfRatio || !near(d.Pct, 100, 1e-9) || !near(d.LowPct, -75, 1e-9) || !near(d.HighPct, 1500, 1e-9) {
		t.Errorf("a doubling: %s %+.6f%% [%+.6f%% %+.6f%%], want ratio +100%% [-75%% +1500%%]", d.PctOf, d.Pct, d.LowPct, d.HighPct)
	}
	if d.Base != 4 || d.Other != 8 {
		t.Errorf("medians %v %v", d.Base, d.Other)
	}
	// Its inverse, a halving: -50 % [-93.75 % +300 %] (1/16 and 4).
	h := Compare([]float64{2, 4, 8, 16, 32}, []float64{1, 2, 4, 8, 16})
	if !near(h.Pct, -50, 1e-9) || !near(h.LowPct, -93.75, 1e-9) || !near(h.HighPct, 300, 1e-9) {
		t.Errorf("a halving: %+.6f%% [%+.6f%% %+.6f%%], want -50%% [-93.75%% +300%%]", h.Pct, h.LowPct, h.HighPct)
	}
	// Six runs' maximum latencies (ms) of two servers, spread as maxima
	// are: the raw shift's interval was [-184.24 % -11.11 %], an
	// impossible fall; the ratio's is [-95.03 % -56.13 %] around -89.78 %.
	m := Compare([]float64{15.24, 17.55, 78.36, 82.51, 160.69, 92.27}, []float64{4.1, 5.2, 6.3, 9.8, 12.5, 7.7})
	if !near(m.Pct, -89.78399900708102, 1e-9) || !near(m.LowPct, -95.0309053448067, 1e-9) || !near(m.HighPct, -56.12535612535613, 1e-9) {
		t.Errorf("maxima: %+.6f%% [%+.6f%% %+.6f%%], want -89.78%% [-95.03%% -56.13%%]", m.Pct, m.LowPct, m.HighPct)
	}
	// Errors, a count with zeros, have no logarithm: the shift in % of the
	// base median (4), clamped at -100 %. The pairwise differences 0 - x
	// are 0, -2, -4, -6, -8 five times each: median -4 (-100 %), bounds
	// the 3rd smallest (-8: -200 %, clamped) and the 3rd largest (0).
	z := Compare([]float64{0, 2, 4, 6, 8}, []float64{0, 0, 0, 0, 0})
	if z.PctOf != PctOfShift || z.Pct != -100 || z.LowPct != -100 || z.HighPct != 0 {
		t.Errorf("errors to none: %s %+v%% [%+v%% %+v%%], want shift -100%% [-100%% +0%%]", z.PctOf, z.Pct, z.LowPct, z.HighPct)
	}
	// A figure that can be negative keeps its raw shift, unclamped.
	neg := Compare([]float64{-1, 2, 4, 6, 8}, []float64{-20, -20, -20, -20, -20})
	if neg.PctOf != PctOfShift || neg.LowPct != -700 {
		t.Errorf("negative figures: %s low %v, want shift -700", neg.PctOf, neg.LowPct)
	}
	// No base median: no percentage.
	if n := Compare([]float64{0, 0, 0, 1, 2}, []float64{1, 2, 3, 4, 5}); !math.IsNaN(n.Pct) || n.PctOf != "" {
		t.Errorf("base median 0: %+v", n)
	}
}

// TestComparePositiveStaysAboveMinus100: for random positive samples of
// every size from 1 to 12 runs, spread up to a factor of e^3 and apart by
// up to e^4 either way, the change and its interval are above -100 %,
// in order, and the verdict is the Mann-Whitney test's on the figures
// themselves. With zeros among them the change is at least -100 %.
func TestComparePositiveStaysAboveMinus100(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 6))
	for i := range 4000 {
		n1, n2 := 1+rng.IntN(12), 1+rng.IntN(12)
		sigma, shift := 3*rng.Float64(), 8*rng.Float64()-4
		base, other := make([]float64, n1), make([]float64, n2)
		for j := range base {
			base[j] = 1000 * math.Exp(sigma*rng.NormFloat64())
		}
		for j := range other {
			other[j] = 1000 * math.Exp(shift+sigma*rng.NormFloat64())
		}
		if i%4 == 3 { // a count: whole numbers, zeros among them
			for j := range base {
				base[j] = math.Floor(base[j] / 500)
			}
			for j := range other {
				other[j] = math.Floor(other[j] / 500)
			}
		}
		d := Compare(base, other)
		floor := -100.0
		if d.PctOf == PctOfRatio && !(d.Pct > floor) || !(d.Pct >= floor) && !math.IsNaN(d.Pct) {
			t.Fatalf("%v vs %v: %s %v%%", base, other, d.PctOf, d.Pct)
		}
		if !math.IsNaN(d.LowPct) {
			if d.PctOf == PctOfRatio && !(d.LowPct > floor) || !(d.LowPct >= floor) || !(d.LowPct <= d.Pct && d.Pct <= d.HighPct) {
				t.Fatalf("%v vs %v: %s %v%% [%v%% %v%%]", base, other, d.PctOf, d.Pct, d.LowPct, d.HighPct)
			}
		}
		if mw := MannWhitneyU(base, other); d.P != mw.P || d.Significant != (mw.P < Alpha && minP(n1, n2) < Alpha) {
			t.Fatalf("%v vs %v: verdict %v p %v, the test's p %v", base, other, d.Significant, d.P, mw.P)
		}
	}
}
