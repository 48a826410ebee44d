package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// genLong is a generated series of n values: noise of cv around levels
// that step (by 3 to 30 %, up or down), drift for a while, or hold;
// outliers; NaN values; and, in some, values rounded to integers (ties)
// or a flat stretch of one value.
func genLong(rng *rand.Rand, n int) []float64 {
	xs := make([]float64, n)
	level := 100 + rng.Float64()*2000
	cv := []float64{0.005, 0.01, 0.03, 0.06}[rng.IntN(4)]
	drift := 0.0
	round := rng.IntN(3) == 0
	for i := range xs {
		switch r := rng.Float64(); {
		case r < 0.03: // a step
			level *= 1 + (0.03+0.27*rng.Float64())*float64(1-2*rng.IntN(2))
			drift = 0
		case r < 0.04: // a drift starts
			drift = 0.004 * float64(1-2*rng.IntN(2))
		case r < 0.06:
			drift = 0
		}
		level *= 1 + drift
		x := level * (1 + cv*rng.NormFloat64())
		switch r := rng.Float64(); {
		case r < 0.04:
			x *= 0.5 + 1.1*rng.Float64() // an outlier
		case r < 0.08:
			x = math.NaN()
		case r < 0.09:
			x = math.Inf(1)
		}
		if round {
			x = math.Round(x)
		}
		xs[i] = x
	}
	if rng.IntN(4) == 0 { // a flat stretch: every value tied
		a := rng.IntN(n)
		for i := a; i < min(n, a+15+rng.IntN(30)); i++ {
			xs[i] = 777
		}
	}
	return xs
}

// sameDelta reports whether two Deltas are the same, bit for bit (NaN
// equal to NaN).
func sameDelta(a, b Delta) bool {
	eq := func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) }
	return a.N1 == b.N1 && a.N2 == b.N2 && eq(a.Base, b.Base) && eq(a.Other, b.Other) && eq(a.Pct, b.Pct) &&
		eq(a.LowPct, b.LowPct) && eq(a.HighPct, b.HighPct) && eq(a.P, b.P) && a.Significant == b.Significant && a.Note == b.Note
}

// checkIncremental pushes xs into a Detector one value at a time and, at
// every length in at (all when nil), checks that the final changes found
// so far followed by the provisional claims are exactly DetectChanges over
// the values so far: each at the same value, with the same Delta, and
// the values compared on each side the ones DetectChanges compared. It
// also checks that the Detector never holds more values than its bound.
func checkIncremental(t *testing.T, name string, xs []float64, o DetectOptions, at func(n int) bool) (finals, provisional int) {
	t.Helper()
	var d Detector
	var fin []Found
	f := o.Filled()
	bound := max(f.MinBefore, f.MaxBefore) + 2*f.Window - 2
	for n := 1; n <= len(xs); n++ {
		fin = append(fin, d.Push(xs[n-1], int64(n-1), o)...)
		if d.Len() > bound {
			t.Fatalf("%s: %d values held after %d, want at most %d", name, d.Len(), n, bound)
		}
		if at != nil && !at(n) && n != len(xs) {
			continue
		}
		prov := d.Provisional(o)
		got := append(append([]Found(nil), fin...), prov...)
		want := DetectChanges(xs[:n], o)
		if len(got) != len(want) {
			t.Fatalf("%s at %d values: %d final + %d provisional, DetectChanges finds %d:\n got %v\nwant %v", name, n, len(fin), len(prov), len(want), indexes(got), want)
		}
		start := 0 // the segment's first value, of the finite ones
		for i, g := range got {
			w := want[i]
			ref := g.Refs[g.Index-g.Lo]
			if int(ref) != w.Index || !sameDelta(g.Delta, w.Delta) {
				t.Fatalf("%s at %d values, change %d: at %d %+v, DetectChanges: at %d %+v", name, n, i, ref, g.Delta, w.Index, w.Delta)
			}
			if g.Lo != max(start, g.Index-f.MaxBefore) || g.Hi-g.Index != g.Delta.N2 || g.Index-g.Lo != g.Delta.N1 || len(g.Refs) != g.Hi-g.Lo {
				t.Fatalf("%s at %d values, change %d: compared [%d, %d) and [%d, %d), Delta n=%d+%d", name, n, i, g.Lo, g.Index, g.Index, g.Hi, g.Delta.N1, g.Delta.N2)
			}
			if g.Final != (i < len(fin)) {
				t.Fatalf("%s at %d values, change %d: final %v", name, n, i, g.Final)
			}
			start = g.Index
		}
	}
	return len(fin), len(d.Provisional(o))
}

func indexes(fs []Found) []string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%d (%+.1f%%, final %v)", f.Refs[f.Index-f.Lo], f.Delta.Pct, f.Final))
	}
	return out
}

// TestIncrementalIsDetectChanges: on generated series of every kind the
// detector's tests use (steps, drifts, outliers, noise) and on long
// ones mixing them with NaN values, ties and flat stretches, under the
// default options and others, the Detector's final changes followed by
// its provisional claims are DetectChanges' changes at every length of
// the series: a change is never found final and then missing or moved.
func TestIncrementalIsDetectChanges(t *testing.T) {
	seeds := 12
	if testing.Short() {
		seeds = 3
	}
	opts := []DetectOptions{{}, {MinBefore: 5, MinAfter: 3, MaxBefore: 12, Window: 5}, {Window: 12, MaxBefore: 20, MinPct: 2},
		{MinBefore: 20, MaxBefore: 10, Window: 4, MinAfter: 4}}
	var finals, provisional int
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 29))
		for _, c := range detectorCases {
			g := c.gen(rng)
			for i, o := range opts {
				f, p := checkIncremental(t, fmt.Sprintf("seed %d, %s, options %d", seed, c.kind, i), g.xs, o, nil)
				finals, provisional = finals+f, provisional+p
			}
		}
		xs := genLong(rng, 160+rng.IntN(200))
		for i, o := range opts {
			f, p := checkIncremental(t, fmt.Sprintf("seed %d, long series, options %d", seed, i), xs, o,
				func(n int) bool { return n%10 == 0 || n < 50 })
			finals, provisional = finals+f, provisional+p
		}
	}
	t.Logf("%d final changes and %d provisional claims at the series' ends, each as DetectChanges finds it", finals, provisional)
	if finals < 30*seeds || provisional == 0 {
		t.Errorf("%d final changes and %d provisional claims: the series should hold many of each", finals, provisional)
	}
}

// TestIncrementalExact: a -10 % step after 10 values is claimed on its
// 4th value (provisional: its window is not full), and final on its
// 14th: 2*Window-1 values from the first candidate that passed on a full
// window (the value before the step, with 7 of it after), at its place,
// with the Delta DetectChanges gives; an outlier never is.
func TestIncrementalExact(t *testing.T) {
	flat := []float64{100.2, 101, 99, 100.1, 102, 98, 100, 101.3, 99.4, 100.4}
	var d Detector
	for i, x := range flat {
		if f := d.Push(x, int64(i), DetectOptions{}); f != nil {
			t.Fatalf("a change in the flat part: %+v", f)
		}
	}
	step := []float64{89, 90, 91, 90, 88.5, 90.2, 91, 89.7, 90, 90.4, 89.1, 90.8, 90, 89.5, 90.1}
	for i, x := range step {
		f := d.Push(x, int64(10+i), DetectOptions{})
		p := d.Provisional(DetectOptions{})
		switch n := i + 1; {
		case n < 4:
			if len(f)+len(p) != 0 {
				t.Fatalf("after %d values of the step: %+v %+v", n, f, p)
			}
		case n < 14: // 9 passed first, on 1 value before the step and 7 of it
			if len(f) != 0 || len(p) != 1 || p[0].Index != 10 || p[0].Final {
				t.Fatalf("after %d values of the step: final %+v, provisional %+v; want one provisional at 10", n, f, p)
			}
		case n == 14:
			want := DetectChanges(append(append([]float64{}, flat...), step...), DetectOptions{})
			if len(f) != 1 || f[0].Index != 10 || !f[0].Final || len(p) != 0 || len(want) != 1 || !sameDelta(f[0].Delta, want[0].Delta) {
				t.Fatalf("after %d values of the step: final %+v, provisional %+v; DetectChanges %+v", n, f, p, want)
			}
			if f[0].Lo != 0 || f[0].Hi != 18 || f[0].Refs[0] != 0 || f[0].Refs[17] != 17 {
				t.Errorf("compared [%d, %d) refs %v, want [0, 18)", f[0].Lo, f[0].Hi, f[0].Refs)
			}
		default:
			if len(f)+len(p) != 0 {
				t.Fatalf("after %d values of the step: %+v %+v", n, f, p)
			}
		}
	}
	var o Detector
	for i, x := range append(append([]float64{}, flat...), 60, 100, 101, 99, 100, 101, 99, 100, 101, 99, 100, 101, 99, 100, 101, 99) {
		if f := o.Push(x, int64(i), DetectOptions{}); f != nil || o.Provisional(DetectOptions{}) != nil {
			t.Fatalf("one outlier at 10 makes a change at %d: %+v", i, f)
		}
	}
	if f := o.Push(math.NaN(), 99, DetectOptions{}); f != nil || o.N != 26 {
		t.Errorf("a NaN pushed: %+v, %d values", f, o.N)
	}
}
