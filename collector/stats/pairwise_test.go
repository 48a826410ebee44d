package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// hodgesLehmannSorted is HodgesLehmann as it was: every pairwise
// difference made and sorted.
func hodgesLehmannSorted(x, y []float64, conf float64) (shift, lo, hi float64, ok bool) {
	x, y = finite(x), finite(y)
	m, n := len(x), len(y)
	if m == 0 || n == 0 {
		return math.NaN(), math.NaN(), math.NaN(), false
	}
	d := make([]float64, 0, m*n)
	for _, a := range x {
		for _, b := range y {
			d = append(d, b-a)
		}
	}
	sort.Float64s(d)
	shift = median(d)
	k := mosesK(m, n, (1-conf)/2)
	if k < 1 {
		return shift, math.NaN(), math.NaN(), false
	}
	return shift, d[k-1], d[len(d)-k], true
}

// TestHodgesLehmannSelectsAsTheSort: the shift and the interval selected
// among the pairwise differences are, bit for bit, those of all the
// differences sorted, on samples of 1 to 400 values: spread or tight,
// with ties (figures rounded, counts), zeros and negatives, logarithms,
// NaN left out, the two samples of different sizes; and every rank of a
// small matrix is selected as the sort has it.
func TestHodgesLehmannSelectsAsTheSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 5))
	gen := func(n int, kind int) []float64 {
		xs := make([]float64, n)
		base := 1 + rng.Float64()*5000
		for i := range xs {
			switch kind {
			case 0: // req/s with noise
				xs[i] = base * (1 + 0.03*rng.NormFloat64())
			case 1: // ties: rounded figures
				xs[i] = math.Round(base*(1+0.02*rng.NormFloat64())/10) * 10
			case 2: // counts, zeros among them
				xs[i] = float64(rng.IntN(4))
			case 3: // negatives and a far outlier
				xs[i] = rng.NormFloat64() * 100
				if rng.IntN(50) == 0 {
					xs[i] = 1e9
				}
			case 4: // logarithms
				xs[i] = math.Log(base * (1 + 0.05*rng.NormFloat64()))
			}
			if rng.IntN(40) == 0 {
				xs[i] = math.NaN()
			}
		}
		return xs
	}
	sizes := []int{1, 2, 3, 4, 5, 7, 10, 20, 21, 40, 41, 100, 200, 400}
	n := 0
	for _, a := range sizes {
		for _, b := range sizes {
			for kind := range 5 {
				x, y := gen(a, kind), gen(b, kind)
				s1, l1, h1, ok1 := HodgesLehmann(x, y, 0.95)
				s2, l2, h2, ok2 := hodgesLehmannSorted(x, y, 0.95)
				same := func(u, v float64) bool {
					return math.Float64bits(u) == math.Float64bits(v) || math.IsNaN(u) && math.IsNaN(v)
				}
				if !same(s1, s2) || !same(l1, l2) || !same(h1, h2) || ok1 != ok2 {
					t.Fatalf("%d x %d (kind %d): selected %v [%v %v] %v, sorted %v [%v %v] %v", a, b, kind, s1, l1, h1, ok1, s2, l2, h2, ok2)
				}
				n++
			}
		}
	}
	// Every rank.
	for range 20 {
		x, y := gen(1+rng.IntN(60), rng.IntN(4)), gen(1+rng.IntN(60), rng.IntN(4))
		x, y = finite(x), finite(y)
		sort.Float64s(x)
		sort.Float64s(y)
		var d []float64
		for _, a := range x {
			for _, b := range y {
				d = append(d, b-a)
			}
		}
		sort.Float64s(d)
		p := pairwise{x: x, y: y}
		for k := range d {
			if got := p.kth(k); math.Float64bits(got) != math.Float64bits(d[k]) {
				t.Fatalf("%d x %d: rank %d selected %v, sorted %v", len(x), len(y), k, got, d[k])
			}
		}
	}
	t.Logf("%d pairs of samples", n)
}

// BenchmarkHodgesLehmann: two groups of 200 runs (a comparison by device
// at 100,000 results reads about that many of each device).
func BenchmarkHodgesLehmann(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	x, y := make([]float64, 200), make([]float64, 200)
	for i := range x {
		x[i], y[i] = 1000*(1+0.03*rng.NormFloat64()), 1030*(1+0.03*rng.NormFloat64())
	}
	b.Run("select", func(b *testing.B) {
		for b.Loop() {
			HodgesLehmann(x, y, 0.95)
		}
	})
	b.Run("sort", func(b *testing.B) {
		for b.Loop() {
			hodgesLehmannSorted(x, y, 0.95)
		}
	})
}

func BenchmarkHodgesLehmannSmall(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sz := range [][2]int{{30, 8}, {8, 8}, {60, 60}} {
		x, y := make([]float64, sz[0]), make([]float64, sz[1])
		for i := range x {
			x[i] = 1000 * (1 + 0.03*rng.NormFloat64())
		}
		for i := range y {
			y[i] = 1030 * (1 + 0.03*rng.NormFloat64())
		}
		b.Run(fmt.Sprintf("select-%dx%d", sz[0], sz[1]), func(b *testing.B) {
			for b.Loop() {
				HodgesLehmann(x, y, 0.95)
			}
		})
		b.Run(fmt.Sprintf("sort-%dx%d", sz[0], sz[1]), func(b *testing.B) {
			for b.Loop() {
				hodgesLehmannSorted(x, y, 0.95)
			}
		})
	}
}
