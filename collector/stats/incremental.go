package stats

import (
	"errors"
	"math"
)

// Detector is DetectChanges as values arrive, one at a time, keeping
// only what the decisions still to come need: the same changes, each
// found once, when it is final.
//
// DetectChanges decides each candidate point k from the values before it
// and the Window values from k on, and places a change among the
// candidates that pass within Window of the first one. Over a series
// that ends less than Window values after k, it decides k on fewer
// values (at least MinAfter): a claim that a longer series may not make,
// or may place elsewhere. The Detector tells the two apart:
//
//   - A candidate is decided for good once its Window values are in:
//     until then DetectChanges over a longer series may decide it
//     otherwise.
//   - A change is final once every candidate that could place it is
//     decided: 2*Window-1 values from the first candidate that passes.
//     Push returns it then, and never again: DetectChanges over the
//     series and over any longer one claims it, at the same place with
//     the same figures.
//   - Provisional lists what DetectChanges claims over the series as it
//     stands beyond the final changes: claims on windows not yet full,
//     which later values may confirm, move or withdraw.
//
// So the final changes followed by the provisional claims are exactly
// DetectChanges over the values pushed (the same indexes and Deltas), at
// every length of the series; a test holds the two to that.
//
// Its memory is bounded: the values from the segment's start or MaxBefore
// before the first candidate not decided, whichever is later, to the
// last: at most max(MinBefore, MaxBefore) + Window - 1 values, and
// Window-1 more while a change found waits for its place to be final.
// NaN and infinite values are skipped as DetectChanges skips them; the
// indexes count the finite values pushed. The zero Detector is empty and
// ready. Its fields are exported to be stored and read back (JSON).
type Detector struct {
	N     int `json:"n"`     // finite values pushed
	Start int `json:"start"` // the current segment's first value
	// K is the first candidate not decided for good (at least Start +
	// MinBefore). Pending: K passed on its full window, so a final change
	// will be placed in [K, K+Window).
	K       int       `json:"k"`
	Pending bool      `json:"pending,omitempty"`
	Off     int       `json:"off"`  // the index of Vals[0]
	Vals    []float64 `json:"vals"` // the values from Off to N-1
	// Refs are the caller's references of Vals (a result's number, say),
	// given to Push and returned with each change.
	Refs []int64 `json:"refs"`
}

// Found is a change the Detector found: Index is the first value after
// it (counting the finite values pushed), Delta compares the values
// before it, [Lo, Index), with those from it on, [Index, Hi); Refs are
// the references of the values Lo to Hi-1. Final is false for a
// provisional claim.
type Found struct {
	ChangePoint
	Lo, Hi int
	Refs   []int64
	Vals   []float64 // the values Lo to Hi-1
	Final  bool
}

// Clone is a deep copy of d.
func (d *Detector) Clone() Detector {
	c := *d
	c.Vals = append([]float64(nil), d.Vals...)
	c.Refs = append([]int64(nil), d.Refs...)
	return c
}

// Push adds the next value of the series, with the caller's reference,
// and returns the changes it makes final (none, usually), oldest first.
// A NaN or infinite value is skipped: it returns nil and changes nothing.
func (d *Detector) Push(x float64, ref int64, o DetectOptions) []Found {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	o = o.Filled()
	d.Vals = append(d.Vals, x)
	d.Refs = append(d.Refs, ref)
	d.N++
	var out []Found
	for {
		d.K = max(d.K, d.Start+o.MinBefore)
		if !d.Pending {
			if d.K+o.Window > d.N { // its window is not full yet
				break
			}
			if !d.passes(d.Start, d.K, d.N, o) {
				d.K++
				continue
			}
			d.Pending = true
		}
		if d.K+2*o.Window-1 > d.N { // a candidate that could place it is not decided
			break
		}
		f := d.place(d.Start, d.K, d.N, o)
		f.Final = true
		out = append(out, f)
		d.Start, d.K, d.Pending = f.Index, f.Index+o.MinBefore, false
	}
	d.trim(o)
	return out
}

// Provisional lists the claims DetectChanges makes over the values pushed
// beyond the final changes, oldest first: each on a window not full yet.
func (d *Detector) Provisional(o DetectOptions) []Found {
	o = o.Filled()
	var out []Found
	start, n := d.Start, d.N
	for k := max(d.K, start+o.MinBefore); k <= n-o.MinAfter; {
		if !d.passes(start, k, n, o) {
			k++
			continue
		}
		f := d.place(start, k, n, o)
		out = append(out, f)
		start = f.Index
		k = start + o.MinBefore
	}
	return out
}

// Check reports what is inconsistent in a Detector read back from a
// store: a Detector that passes holds every value Push and Provisional
// read under o.
func (d *Detector) Check(o DetectOptions) error {
	o = o.Filled()
	switch {
	case len(d.Refs) != len(d.Vals):
		return errors.New("detector: values and references differ in number")
	case d.Off < 0 || d.Off+len(d.Vals) != d.N:
		return errors.New("detector: values do not end at the last one")
	case d.Start < 0 || d.Start > d.N || d.K < 0:
		return errors.New("detector: segment out of range")
	case d.Off > max(d.Start, max(d.K, d.Start+o.MinBefore)-o.MaxBefore):
		return errors.New("detector: values needed were dropped")
	}
	for _, v := range d.Vals {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return errors.New("detector: a value is not finite")
		}
	}
	return nil
}

// Len is the number of values the Detector holds.
func (d *Detector) Len() int { return len(d.Vals) }

// vals are the values [a, b) (indexes of the series).
func (d *Detector) vals(a, b int) []float64 { return d.Vals[a-d.Off : b-d.Off] }

// test compares the values before k (at most MaxBefore, from start on)
// with the Window values from k on, of the first n.
func (d *Detector) test(start, k, n int, o DetectOptions) Delta {
	return Compare(d.vals(max(start, k-o.MaxBefore), k), d.vals(k, min(n, k+o.Window)))
}

// passes is sig of the test at k: the Mann-Whitney p-value first, which
// fails most candidates alone, and the rest of the test (the medians,
// the Hodges-Lehmann shift and its interval) only for those it passes.
// The same decisions as sig(test) at a third of the cost of a series'
// update.
func (d *Detector) passes(start, k, n int, o DetectOptions) bool {
	if MannWhitneyU(d.vals(max(start, k-o.MaxBefore), k), d.vals(k, min(n, k+o.Window))).P >= o.Alpha {
		return false
	}
	return d.sig(start, k, d.test(start, k, n, o), o)
}

// sig is DetectChanges' rule for a change at k.
func (d *Detector) sig(start, k int, t Delta, o DetectOptions) bool {
	if t.P >= o.Alpha || math.Abs(t.Pct) < o.MinPct || (!math.IsNaN(t.LowPct) && t.LowPct*t.HighPct <= 0) {
		return false
	}
	noise := 1.4826 * mad(d.vals(max(start, k-o.MaxBefore), k))
	return math.Abs(t.Other-t.Base) >= o.MinNoise*noise
}

// place is DetectChanges' choice of where the change first passed at k
// is, among the candidates that pass within Window of k, over the first
// n values.
func (d *Detector) place(start, k, n int, o DetectOptions) Found {
	cands := []int{k}
	for j := k + 1; j < k+o.Window && j <= n-o.MinAfter; j++ {
		if d.passes(start, j, n, o) {
			cands = append(cands, j)
		}
	}
	lo, hi := max(start, k-o.MaxBefore), min(n, cands[len(cands)-1]+o.Window)
	best, bestCost := k, math.Inf(1)
	for _, j := range cands {
		if c := l1(d.vals(lo, j)) + l1(d.vals(j, hi)); c < bestCost {
			best, bestCost = j, c
		}
	}
	f := Found{ChangePoint: ChangePoint{Index: best, Delta: d.test(start, best, n, o)},
		Lo: max(start, best-o.MaxBefore), Hi: min(n, best+o.Window)}
	f.Refs = append([]int64(nil), d.Refs[f.Lo-d.Off:f.Hi-d.Off]...)
	f.Vals = append([]float64(nil), d.vals(f.Lo, f.Hi)...)
	return f
}

// trim drops the values no decision to come reads: those before the
// segment's start and before MaxBefore ahead of K.
func (d *Detector) trim(o DetectOptions) {
	keep := min(max(d.Start, d.K-o.MaxBefore), d.N)
	if keep <= d.Off {
		return
	}
	n := keep - d.Off
	d.Vals = append(d.Vals[:0], d.Vals[n:]...)
	d.Refs = append(d.Refs[:0], d.Refs[n:]...)
	d.Off = keep
}
