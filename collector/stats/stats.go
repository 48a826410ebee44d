package stats

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"

	mstats "github.com/aclements/go-moremath/stats"

	"github.com/edgebench/edgebench/loadgen/report"
)

// Alpha is the significance level of every comparison, as benchstat's
// default.
const Alpha = 0.05

// exactMax is the largest sample size for which MannWhitneyU counts the
// exact null distribution; past it (or with ties) the normal
// approximation is close enough and cheaper.
const exactMax = 20

// GroupStats describes one group's values of one figure.
type GroupStats struct {
	N      int
	Sum    float64
	Mean   float64
	StdDev float64 // sample standard deviation, 0 for n < 2
	Median float64
	Min    float64
	Max    float64
	CILow  float64 // 95 % confidence interval of the mean (Student's t)
	CIHigh float64
	// MedianLow and MedianHigh are the 95 % confidence interval of the
	// median: two of the values themselves (order statistics, as
	// benchstat computes it), so an interval of a positive figure is
	// positive. NaN with fewer than MedianCIRuns values.
	MedianLow  float64
	MedianHigh float64
}

// MedianCIRuns is the fewest values with a 95 % interval of their median:
// with fewer, even the smallest and largest value bound it with less
// confidence. medianCIRuns computes it; a test keeps the two equal.
const MedianCIRuns = 6

func medianCIRuns() int {
	n := 2
	for ; n < 50; n++ {
		if ci := mstats.QuantileCI(n, 0.5, 0.95); ci.LoOrder >= 1 && ci.HiOrder <= n {
			break
		}
	}
	return n
}

// medianCI is the 95 % interval of the median of sorted, NaN when there
// are too few values for one.
func medianCI(sorted []float64) (lo, hi float64) {
	n := len(sorted)
	if n < 2 {
		return math.NaN(), math.NaN()
	}
	ci := mstats.QuantileCI(n, 0.5, 0.95)
	if ci.LoOrder < 1 || ci.HiOrder > n {
		return math.NaN(), math.NaN()
	}
	return sorted[ci.LoOrder-1], sorted[ci.HiOrder-1]
}

// Describe describes xs. NaN values (absent figures) are left out.
func Describe(xs []float64) GroupStats {
	xs = finite(xs)
	s := GroupStats{N: len(xs)}
	if s.N == 0 {
		nan := math.NaN()
		return GroupStats{Mean: nan, StdDev: nan, Median: nan, Min: nan, Max: nan, CILow: nan, CIHigh: nan, MedianLow: nan, MedianHigh: nan}
	}
	sorted := append([]float64(nil), xs...)
	sort.Float64s(sorted)
	s.Min, s.Max, s.Median = sorted[0], sorted[s.N-1], median(sorted)
	s.MedianLow, s.MedianHigh = medianCI(sorted)
	for _, x := range xs {
		s.Sum += x
	}
	s.Mean = s.Sum / float64(s.N)
	if s.N > 1 {
		var ss float64
		for _, x := range xs {
			ss += (x - s.Mean) * (x - s.Mean)
		}
		s.StdDev = math.Sqrt(ss / float64(s.N-1))
	}
	half := report.StudentT95(s.N-1) * s.StdDev / math.Sqrt(float64(s.N))
	s.CILow, s.CIHigh = s.Mean-half, s.Mean+half
	return s
}

// MWResult is the outcome of a Mann-Whitney U test.
type MWResult struct {
	U     float64 // U of the first sample: pairs (x, y) with x > y, ties counting one half
	P     float64 // two-sided p-value
	Exact bool    // P comes from the exact null distribution, not the normal approximation
	Ties  bool    // the pooled samples hold tied values
}

// MannWhitneyU tests whether x and y come from the same distribution
// against the two-sided alternative that one tends to be larger. Without
// ties and with both samples of at most 20 values the p-value is exact;
// otherwise it uses the normal approximation with the tie correction of
// the variance and a continuity correction (as scipy.stats.mannwhitneyu's
// "asymptotic" method), never below 2/C(m+n, m), the smallest p-value the
// test can give for those sizes. P is 1 when either sample is empty.
func MannWhitneyU(x, y []float64) MWResult {
	x, y = finite(x), finite(y)
	n1, n2 := len(x), len(y)
	if n1 == 0 || n2 == 0 {
		return MWResult{P: 1}
	}
	ranks, tieTerm := rank(x, y)
	var r1 float64
	for i := range n1 {
		r1 += ranks[i]
	}
	u := r1 - float64(n1*(n1+1))/2
	res := MWResult{U: u, Ties: tieTerm > 0}
	if !res.Ties && n1 <= exactMax && n2 <= exactMax {
		res.Exact = true
		res.P = exactP(n1, n2, u)
		return res
	}
	// Ties make the normal approximation claim less than the smallest p
	// any arrangement of the samples can have; keep it at that floor.
	res.P = math.Max(normalP(n1, n2, u, tieTerm), minP(n1, n2))
	return res
}

// normalP is the two-sided p-value of U under the normal approximation,
// with the tie-corrected variance and a continuity correction.
func normalP(n1, n2 int, u, tieTerm float64) float64 {
	m, n := float64(n1), float64(n2)
	N := m + n
	variance := m * n / 12 * ((N + 1) - tieTerm/(N*(N-1)))
	if variance <= 0 { // every value equal: no evidence of a difference
		return 1
	}
	d := math.Abs(u-m*n/2) - 0.5
	if d < 0 {
		d = 0
	}
	return math.Min(1, math.Erfc(d/math.Sqrt(variance)/math.Sqrt2))
}

// rank gives the pooled midranks of x then y, and the tie term
// sum(t^3 - t) over groups of t tied values.
func rank(x, y []float64) ([]float64, float64) {
	type item struct {
		v float64
		i int
	}
	all := make([]item, 0, len(x)+len(y))
	for i, v := range x {
		all = append(all, item{v, i})
	}
	for i, v := range y {
		all = append(all, item{v, len(x) + i})
	}
	slices.SortFunc(all, func(a, b item) int { return cmp.Compare(a.v, b.v) })
	ranks := make([]float64, len(all))
	var tie float64
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		mid := float64(i+j+1) / 2 // ranks i+1..j
		for k := i; k < j; k++ {
			ranks[all[k].i] = mid
		}
		if t := float64(j - i); t > 1 {
			tie += t*t*t - t
		}
		i = j
	}
	return ranks, tie
}

// uDist returns the number of arrangements of m and n values giving each
// U from 0 to m*n, and their total C(m+n, m): from the table computed
// once (tables.go) when both are at most exactMax, else by uDistRows.
func uDist(m, n int) ([]float64, float64) {
	if m <= exactMax && n <= exactMax {
		t := exactTables()
		return t.dist[m][n], t.total[m][n]
	}
	rows := uDistRows(m, n)
	dist := rows[m][n]
	var total float64
	for _, c := range dist {
		total += c
	}
	return dist, total
}

// uDistRows returns the distributions of U for every i <= m and k <= n
// values, rows[i][k]. It uses the recurrence f(m, n, u) = f(m-1, n, u-n)
// + f(m, n-1, u), additions only, so the counts stay accurate in float64.
func uDistRows(m, n int) [][][]float64 {
	// rows[i-1] is the distribution for sizes (i-1, k); rows[i] for (i, k).
	newRow := func(i int) [][]float64 {
		row := make([][]float64, n+1)
		for k := range row {
			row[k] = make([]float64, i*k+1)
		}
		return row
	}
	rows := make([][][]float64, m+1)
	prev := newRow(0)
	for k := range prev {
		prev[k][0] = 1 // no x values: U is 0 in one way
	}
	rows[0] = prev
	for i := 1; i <= m; i++ {
		cur := newRow(i)
		cur[0][0] = 1
		for k := 1; k <= n; k++ {
			for u := range cur[k] {
				var c float64
				if u-k >= 0 && u-k < len(prev[k]) { // the largest value is an x: it beats all k y values
					c += prev[k][u-k]
				}
				if u < len(cur[k-1]) { // the largest value is a y
					c += cur[k-1][u]
				}
				cur[k][u] = c
			}
		}
		rows[i] = cur
		prev = cur
	}
	return rows
}

// exactP is the exact two-sided p-value of U for samples of m and n
// values without ties: twice the smaller tail, at most 1.
func exactP(m, n int, u float64) float64 {
	dist, total := uDist(m, n)
	k := int(math.Round(u))
	var lower, upper float64
	for i, c := range dist {
		if i <= k {
			lower += c
		}
		if i >= k {
			upper += c
		}
	}
	return math.Min(1, 2*math.Min(lower, upper)/total)
}

// minP is the smallest two-sided p-value samples of m and n values can
// give: with fewer runs no difference can be significant.
func minP(m, n int) float64 {
	if m == 0 || n == 0 {
		return 1
	}
	return math.Min(1, 2/binom(m+n, m))
}

func binom(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

// HodgesLehmann estimates the shift y - x as the median of all pairwise
// differences y[j] - x[i], with the distribution-free confidence interval
// of Moses that inverts the Mann-Whitney test: the k-th smallest and k-th
// largest differences, k chosen from the null distribution of U so that
// the interval covers at least conf. ok is false when the samples are too
// small for any interval at that level (the bounds are then NaN).
//
// Up to sortPairsMax differences are made and sorted; past it they are
// selected without being made (pairwise), which gives the same values.
func HodgesLehmann(x, y []float64, conf float64) (shift, lo, hi float64, ok bool) {
	x, y = finite(x), finite(y)
	m, n := len(x), len(y)
	if m == 0 || n == 0 {
		return math.NaN(), math.NaN(), math.NaN(), false
	}
	k := mosesK(m, n, (1-conf)/2)
	if m*n > sortPairsMax {
		// The order statistics of the m x n differences, selected
		// (pairwise).
		d := pairwise{x: slices.Sorted(slices.Values(x)), y: slices.Sorted(slices.Values(y))}
		shift = d.median()
		if k < 1 {
			return shift, math.NaN(), math.NaN(), false
		}
		return shift, d.kth(k - 1), d.kth(m*n - k), true
	}
	d := make([]float64, 0, m*n)
	for _, a := range x {
		for _, b := range y {
			d = append(d, b-a)
		}
	}
	sort.Float64s(d)
	shift = median(d)
	if k < 1 {
		return shift, math.NaN(), math.NaN(), false
	}
	return shift, d[k-1], d[len(d)-k], true
}

// mosesK is the largest k with P(U <= k-1) <= tail under the null, the
// rank of the interval's bounds among the ordered pairwise differences.
func mosesK(m, n int, tail float64) int {
	if m <= exactMax && n <= exactMax {
		dist, total := uDist(m, n)
		var cum float64
		k := 0
		for u, c := range dist {
			cum += c
			if cum/total > tail {
				break
			}
			k = u + 1
		}
		return k
	}
	mm, nn := float64(m), float64(n)
	z := quantile(1 - tail)
	return int(math.Floor(mm*nn/2 - z*math.Sqrt(mm*nn*(mm+nn+1)/12)))
}

// normalQuantile is the standard normal quantile, by bisection on Erfc:
// slow but exact to float precision, and only called once per comparison.
func normalQuantile(p float64) float64 {
	lo, hi := -40.0, 40.0
	for range 200 {
		mid := (lo + hi) / 2
		if 0.5*math.Erfc(-mid/math.Sqrt2) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// Delta is the difference of one figure between a base group and another,
// as benchstat reports it.
//
// The figures compared (req/s, latencies, CPU, memory) are positive and
// change by factors, so the difference is a ratio: the Hodges-Lehmann
// shift of their logarithms (the median of all pairwise log ratios
// log(other[j] / base[i])) with Moses' 95 % interval of it, brought back
// as exp(shift) - 1 and exp(lo) - 1 .. exp(hi) - 1, in % (PctOf "ratio").
// A change in % is then never -100 % or below, whatever the spread, where
// the shift of the raw figures in % of the base median gave a maximum
// latency "shrinking" by -108.53 %. When a figure is 0 or less (a count
// of errors, a run that completed nothing) there is no logarithm: the
// difference is the shift of the raw figures in % of the base group's
// median (PctOf "shift"), clamped at -100 % when no figure is negative.
//
// Hodges-Lehmann was chosen over a bootstrap of the difference of means
// because it is the estimator that goes with the Mann-Whitney test (its
// interval leaves out 0 about when the test rejects; a logarithm moves no
// rank and turns the sign of no pair's difference, so the p-value and
// whether the interval leaves out 0 are the same on the figures and on
// their logarithms), it needs no normality and no random seed, it is robust to
// the odd disturbed run, and it is defined for the 3 to 10 runs users
// repeat. The ratio's interval counts the spread of both groups.
type Delta struct {
	N1, N2      int
	Base, Other float64 // medians
	Pct         float64 // the change from base to other, %
	LowPct      float64 // 95 % interval of Pct; NaN when the samples are too small
	HighPct     float64
	PctOf       string  // how Pct was computed: PctOfRatio or PctOfShift; "" when it was not
	P           float64 // two-sided Mann-Whitney p-value
	Significant bool    // P < Alpha and the samples large enough to show it
	Note        string  // why a difference is not claimed, if not by P alone
}

// How a Delta's Pct was computed (Delta.PctOf).
const (
	// PctOfRatio: exp(Hodges-Lehmann shift of the logarithms) - 1, the
	// estimate of the ratio other / base, with its interval the same way.
	PctOfRatio = "ratio"
	// PctOfShift: the Hodges-Lehmann shift of the figures in % of the
	// base median, clamped at -100 % when none is negative; for figures
	// of which one is 0 or less.
	PctOfShift = "shift"
)

// Compare computes the Delta from base to other.
func Compare(base, other []float64) Delta {
	base, other = finite(base), finite(other)
	d := Delta{N1: len(base), N2: len(other), Pct: math.NaN(), LowPct: math.NaN(), HighPct: math.NaN(), P: 1}
	if d.N1 == 0 || d.N2 == 0 {
		d.Base, d.Other = math.NaN(), math.NaN()
		d.Note = "no runs"
		return d
	}
	sb := append([]float64(nil), base...)
	so := append([]float64(nil), other...)
	sort.Float64s(sb)
	sort.Float64s(so)
	d.Base, d.Other = median(sb), median(so)
	d.P = MannWhitneyU(base, other).P
	switch least := math.Min(sb[0], so[0]); {
	case least > 0:
		shift, lo, hi, ok := HodgesLehmann(logs(base), logs(other), 0.95)
		d.PctOf, d.Pct = PctOfRatio, 100*math.Expm1(shift)
		if ok {
			d.LowPct, d.HighPct = 100*math.Expm1(lo), 100*math.Expm1(hi)
		}
	case d.Base != 0:
		shift, lo, hi, ok := HodgesLehmann(base, other, 0.95)
		d.PctOf, d.Pct = PctOfShift, 100*shift/math.Abs(d.Base)
		if ok {
			d.LowPct, d.HighPct = 100*lo/math.Abs(d.Base), 100*hi/math.Abs(d.Base)
		}
		if least >= 0 { // figures of 0 and more fall by at most all of them
			d.Pct, d.LowPct, d.HighPct = math.Max(d.Pct, -100), math.Max(d.LowPct, -100), math.Max(d.HighPct, -100)
		}
	}
	switch {
	case minP(d.N1, d.N2) >= Alpha:
		d.Note = fmt.Sprintf("need >= 4 runs per group to detect a difference at alpha %.2f", Alpha)
	case d.P < Alpha:
		d.Significant = true
	}
	return d
}

// logs is the natural logarithm of each of xs, all positive.
func logs(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Log(x)
	}
	return out
}

// Verdict is the delta column as benchstat writes it: "+12.34%" when the
// difference is significant, "~" when it is not.
func (d Delta) Verdict() string {
	if !d.Significant || math.IsNaN(d.Pct) {
		return "~"
	}
	return fmt.Sprintf("%+.2f%%", d.Pct)
}

// String is the verdict with its interval and p-value and sample sizes,
// for example "+12.34% [+8.00% +16.10%] (p=0.008 n=5+5)".
func (d Delta) String() string {
	ci := ""
	if !math.IsNaN(d.LowPct) {
		ci = fmt.Sprintf(" [%+.2f%% %+.2f%%]", d.LowPct, d.HighPct)
	}
	return fmt.Sprintf("%s%s (p=%.3f n=%d+%d)", d.Verdict(), ci, d.P, d.N1, d.N2)
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// finite returns xs without NaN and infinite values, reusing xs when it
// has none.
func finite(xs []float64) []float64 {
	for i, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			out := append([]float64(nil), xs[:i]...)
			for _, y := range xs[i+1:] {
				if !math.IsNaN(y) && !math.IsInf(y, 0) {
					out = append(out, y)
				}
			}
			return out
		}
	}
	return xs
}
