package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// genSeries is a generated series: n values around base with relative
// Gaussian noise cv, and the true change points (the first index of each
// new level; none for outliers).
type genSeries struct {
	xs     []float64
	steps  []int // true changes
	signOf int   // +1 up, -1 down
}

func noisy(rng *rand.Rand, n int, level func(i int) float64, cv float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = level(i) * (1 + cv*rng.NormFloat64())
	}
	return xs
}

// detectorCase is one kind of generated series and what the detector
// should find in it.
type detectorCase struct {
	kind string
	gen  func(rng *rand.Rand) genSeries
}

const genN, genCV = 40, 0.03

var detectorCases = []detectorCase{
	{"noise only (cv 3 %)", func(rng *rand.Rand) genSeries {
		return genSeries{xs: noisy(rng, genN, func(int) float64 { return 1000 }, genCV)}
	}},
	{"noise, cv 6 %", func(rng *rand.Rand) genSeries {
		return genSeries{xs: noisy(rng, genN, func(int) float64 { return 1000 }, 2*genCV)}
	}},
	{"one outlier (-40 %)", func(rng *rand.Rand) genSeries {
		xs := noisy(rng, genN, func(int) float64 { return 1000 }, genCV)
		xs[10+rng.IntN(25)] *= 0.6
		return genSeries{xs: xs}
	}},
	{"three scattered outliers (+-40 %)", func(rng *rand.Rand) genSeries {
		xs := noisy(rng, genN, func(int) float64 { return 1000 }, genCV)
		for _, i := range []int{8 + rng.IntN(8), 18 + rng.IntN(8), 28 + rng.IntN(8)} {
			xs[i] *= 1 + 0.4*float64(1-2*rng.IntN(2))
		}
		return genSeries{xs: xs}
	}},
	{"step -10 %", func(rng *rand.Rand) genSeries {
		s := 12 + rng.IntN(20)
		return genSeries{xs: noisy(rng, genN, func(i int) float64 { return map[bool]float64{true: 900, false: 1000}[i >= s] }, genCV), steps: []int{s}, signOf: -1}
	}},
	{"step +10 %", func(rng *rand.Rand) genSeries {
		s := 12 + rng.IntN(20)
		return genSeries{xs: noisy(rng, genN, func(i int) float64 { return map[bool]float64{true: 1100, false: 1000}[i >= s] }, genCV), steps: []int{s}, signOf: +1}
	}},
	{"step -10 % with an outlier after it", func(rng *rand.Rand) genSeries {
		s := 12 + rng.IntN(20)
		xs := noisy(rng, genN, func(i int) float64 { return map[bool]float64{true: 900, false: 1000}[i >= s] }, genCV)
		xs[s+1] *= 1.4
		return genSeries{xs: xs, steps: []int{s}, signOf: -1}
	}},
	{"drift -0.6 %/run from run 10", func(rng *rand.Rand) genSeries {
		return genSeries{xs: noisy(rng, genN, func(i int) float64 { return 1000 * (1 - 0.006*float64(max(0, i-10))) }, genCV), steps: []int{10}, signOf: -1}
	}},
}

// detectorFigures runs the detector over trials series of each case and
// counts: series where a true change was found (right direction; for a
// step within 2 runs of it), found within 4 results of the step when the
// series ends 4 results after it (as results arrive), and false changes.
type detectorFigures struct {
	kind                        string
	series, withChange          int
	found, foundEarly, falseAls int
	falsePerSeries              float64
}

func evaluateDetector(seed uint64, trials int) []detectorFigures {
	rng := rand.New(rand.NewPCG(seed, 23))
	var out []detectorFigures
	for _, c := range detectorCases {
		f := detectorFigures{kind: c.kind, series: trials}
		for range trials {
			g := c.gen(rng)
			cps := DetectChanges(g.xs, DetectOptions{})
			found := false
			for _, cp := range cps {
				ok := len(g.steps) > 0 && int(math.Copysign(1, cp.Delta.Pct)) == g.signOf
				if ok && strings.HasPrefix(c.kind, "step") {
					ok = abs(cp.Index-g.steps[0]) <= 2
				}
				if ok && !found {
					found = true
					continue
				}
				if !ok || !strings.HasPrefix(c.kind, "drift") {
					f.falseAls++ // a drift may be cut in several changes, all true
				}
			}
			if len(g.steps) > 0 {
				f.withChange++
				if found {
					f.found++
				}
				if s := g.steps[0]; strings.HasPrefix(c.kind, "step") && s+earlyRuns(c.kind) <= len(g.xs) {
					for _, cp := range DetectChanges(g.xs[:s+earlyRuns(c.kind)], DetectOptions{}) {
						if abs(cp.Index-s) <= 2 {
							f.foundEarly++
							break
						}
					}
				}
			}
		}
		f.falsePerSeries = float64(f.falseAls) / float64(trials)
		out = append(out, f)
	}
	return out
}

// earlyRuns is how many results of a step the detector is given to find
// it as results arrive: 4, or 6 when one of them is an outlier.
func earlyRuns(kind string) int {
	if strings.Contains(kind, "outlier") {
		return 6
	}
	return 4
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// TestDetectorOnGeneratedSeries: the detector's found and false counts
// on generated series (the table in bench/README.md is this test's log,
// go test ./collector -run TestDetectorOnGeneratedSeries -v).
func TestDetectorOnGeneratedSeries(t *testing.T) {
	const trials = 200
	figs := evaluateDetector(1, trials)
	var b strings.Builder
	fmt.Fprintf(&b, "\n| series (%d of each, %d runs, noise cv 3 %% unless said) | found | found as results arrive | false changes |\n|---|---|---|---|\n", trials, genN)
	for _, f := range figs {
		found, early := "-", "-"
		if f.withChange > 0 {
			found = fmt.Sprintf("%d of %d", f.found, f.withChange)
			if strings.HasPrefix(f.kind, "step") {
				early = fmt.Sprintf("%d of %d within %d runs", f.foundEarly, f.withChange, earlyRuns(f.kind))
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d (%.3f per series) |\n", f.kind, found, early, f.falseAls, f.falsePerSeries)
	}
	t.Log(b.String())
	for _, f := range figs {
		switch {
		case f.withChange == 0 && strings.Contains(f.kind, "cv 6"):
			if f.falsePerSeries > 0.1 {
				t.Errorf("%s: %.3f false changes per series, want <= 0.1", f.kind, f.falsePerSeries)
			}
		case f.withChange == 0:
			if f.falsePerSeries > 0.02 {
				t.Errorf("%s: %.3f false changes per series, want <= 0.02", f.kind, f.falsePerSeries)
			}
		default:
			if f.found < f.withChange*95/100 {
				t.Errorf("%s: found %d of %d, want 95 %%", f.kind, f.found, f.withChange)
			}
			if strings.HasPrefix(f.kind, "step") && f.foundEarly < f.withChange*90/100 {
				t.Errorf("%s: found within %d runs %d of %d, want 90 %%", f.kind, earlyRuns(f.kind), f.foundEarly, f.withChange)
			}
			if f.falsePerSeries > 0.06 {
				t.Errorf("%s: %.3f false changes per series, want <= 0.06", f.kind, f.falsePerSeries)
			}
		}
	}
}

// TestDetectorExact: exact cases, one value each.
func TestDetectorExact(t *testing.T) {
	flat := []float64{100.2, 101, 99, 100.1, 102, 98, 100, 101.3, 99.4, 100.4}
	if cps := DetectChanges(append(append([]float64{}, flat...), 60, 100, 101, 99), DetectOptions{}); len(cps) != 0 {
		t.Errorf("one outlier: %+v", cps)
	}
	step := append(append([]float64{}, flat...), 89, 90, 91, 90)
	cps := DetectChanges(step, DetectOptions{})
	if len(cps) != 1 || cps[0].Index != 10 || math.Round(cps[0].Delta.Base) != 100 || cps[0].Delta.Other != 90 || cps[0].Delta.N2 != 4 {
		t.Fatalf("a -10 %% step after 10 runs, 4 runs in: %+v", cps)
	}
	if cps := DetectChanges(step[:13], DetectOptions{}); len(cps) != 0 {
		t.Errorf("3 runs of the step are not enough: %+v", cps)
	}
	small := append(append([]float64{}, flat...), 97, 97, 96, 97, 97, 97) // -3 %: below MinPct
	if cps := DetectChanges(small, DetectOptions{}); len(cps) != 0 {
		t.Errorf("a 3 %% step: %+v", cps)
	}
	nan := append(append([]float64{}, flat...), math.NaN(), 89, 90, 91, 90)
	if cps := DetectChanges(nan, DetectOptions{}); len(cps) != 1 || cps[0].Index != 11 {
		t.Errorf("with a NaN before the step: %+v, want index 11", cps)
	}
}
