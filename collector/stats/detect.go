package stats

import (
	"math"
	"sort"
)

// The change detector: lasting shifts in a series of figures, one value
// per result in the order the results were run.
//
// The method is a windowed rank test in the spirit of the change-point
// detection MongoDB runs on its performance CI (E-Divisive means, Daly et
// al., ICPE 2020; Hunter) and of the threshold tests of Bencher and
// conbench, made robust and usable as results arrive: for each candidate
// point k of the current segment (everything since the last change), the
// values before k (at most MaxBefore) are compared with the Window values
// from k on by the Mann-Whitney U test and the Hodges-Lehmann shift with
// its 95 % interval (stats.go). A change is claimed where
//
//   - the p-value is below Alpha,
//   - the change is at least MinPct % (Delta.Pct: a ratio, from the
//     logarithms, so a fall is never -100 % or below), and
//   - its 95 % interval excludes zero, and the medians differ by at
//     least MinNoise (1.5) times the noise of the values before (1.4826 MAD),
//
// with at least MinBefore values before and MinAfter from k on. Of the
// neighbouring points that pass (within Window of the first), the one
// that splits their span into two parts of least absolute deviation from
// each part's median is the change, and the next segment starts there.
//
// Ranks make one outlier harmless: it moves one rank of MinAfter, never
// the median of the values after it. A lasting step shows when MinAfter
// results of it are in (4 by default: 4 values above 10 before give
// p = 0.002). A slow drift shows once the values since the last change
// differ enough from those before, and then again further on.

// DetectOptions tune the detector. Zero values take the defaults.
type DetectOptions struct {
	MinBefore int     // values before a change, at least; default 8
	MinAfter  int     // values from a change on, at least; default 4
	MaxBefore int     // values before a candidate compared, at most; default 30
	Window    int     // values from a candidate on compared, at most; default 8
	Alpha     float64 // the rank test's level; default 0.01
	MinPct    float64 // the smallest change claimed (Delta.Pct), %; default 5
	// MinNoise is the smallest shift claimed in units of the noise before
	// it (1.4826 times the median absolute deviation); default 1.5.
	MinNoise float64
}

// Filled is o with its zero fields set to their defaults.
func (o DetectOptions) Filled() DetectOptions {
	if o.MinBefore <= 0 {
		o.MinBefore = 8
	}
	if o.MinAfter <= 0 {
		o.MinAfter = 4
	}
	if o.MaxBefore <= 0 {
		o.MaxBefore = 30
	}
	if o.Window < o.MinAfter {
		o.Window = max(8, o.MinAfter)
	}
	if o.Alpha <= 0 {
		o.Alpha = 0.01
	}
	if o.MinNoise <= 0 {
		o.MinNoise = 1.5
	}
	if o.MinPct <= 0 {
		o.MinPct = 5
	}
	return o
}

// ChangePoint is a change found in a series: Index is the first value
// after it; Delta compares the values before (Base) with those after
// (Other), as compare does.
type ChangePoint struct {
	Index int
	Delta Delta
}

// DetectChanges finds the lasting changes in xs (NaN values are skipped
// as if absent: indexes still refer to xs).
func DetectChanges(xs []float64, o DetectOptions) []ChangePoint {
	o = o.Filled()
	idx := make([]int, 0, len(xs)) // positions of the finite values
	vs := make([]float64, 0, len(xs))
	for i, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			idx = append(idx, i)
			vs = append(vs, x)
		}
	}
	n := len(vs)
	test := func(start, k int) Delta {
		return Compare(vs[max(start, k-o.MaxBefore):k], vs[k:min(n, k+o.Window)])
	}
	sig := func(start, k int, d Delta) bool {
		if d.P >= o.Alpha || math.Abs(d.Pct) < o.MinPct || (!math.IsNaN(d.LowPct) && d.LowPct*d.HighPct <= 0) {
			return false
		}
		noise := 1.4826 * mad(vs[max(start, k-o.MaxBefore):k])
		return math.Abs(d.Other-d.Base) >= o.MinNoise*noise
	}
	var out []ChangePoint
	start := 0
	for k := start + o.MinBefore; k <= n-o.MinAfter; {
		d := test(start, k)
		if !sig(start, k, d) {
			k++
			continue
		}
		// Where exactly: of the candidates that pass within Window of the
		// first, the split of one span into two with the least absolute
		// deviation from each side's median (a robust least-cost split).
		cands := []int{k}
		for j := k + 1; j < k+o.Window && j <= n-o.MinAfter; j++ {
			if sig(start, j, test(start, j)) {
				cands = append(cands, j)
			}
		}
		lo, hi := max(start, k-o.MaxBefore), min(n, cands[len(cands)-1]+o.Window)
		best, bestCost := k, math.Inf(1)
		for _, j := range cands {
			if c := l1(vs[lo:j]) + l1(vs[j:hi]); c < bestCost {
				best, bestCost = j, c
			}
		}
		d = test(start, best)
		out = append(out, ChangePoint{Index: idx[best], Delta: d})
		start = best
		k = start + o.MinBefore
	}
	return out
}

// mad is the median absolute deviation from the median.
func mad(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	m := median(s)
	for i := range s {
		s[i] = math.Abs(s[i] - m)
	}
	sort.Float64s(s)
	return median(s)
}

// l1 is the sum of the absolute deviations from the median.
func l1(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	m := median(s)
	var sum float64
	for _, x := range s {
		sum += math.Abs(x - m)
	}
	return sum
}
