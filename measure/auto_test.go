package measure

import (
	"math"
	"testing"
	"time"

	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/wire"
)

// autoRun is a run of a 1 s window that completed n requests, every one
// in p99us microseconds (so its p99 is p99us), at rate (0: closed loop).
func autoRun(rate float64, n int64, p99us int64) Run {
	h := report.NewLatencyHistogram()
	for range n {
		h.Record(p99us)
	}
	return Run{Load: &report.LoadResult{Rate: rate, Duration: time.Second, Completed: n, Latency: h}}
}

// TestAutoJudgesTheFigureTheLoopLeavesFree: in open loop the rate fixes
// req/s, so --repeat auto judges latency's p99; in closed loop req/s.
// Each case has one figure steady and the other varying by far more
// than the threshold: judged on the wrong one, "stable" flips.
func TestAutoJudgesTheFigureTheLoopLeavesFree(t *testing.T) {
	a := &Auto{RSDPct: 3.5}
	rsd := func(xs ...float64) float64 {
		var m, ss float64
		for _, x := range xs {
			m += x
		}
		m /= float64(len(xs))
		for _, x := range xs {
			ss += (x - m) * (x - m)
		}
		return 100 * math.Sqrt(ss/float64(len(xs)-1)) / m
	}
	for _, tc := range []struct {
		name   string
		runs   []Run
		figure string
		stable bool
		rsd    float64
	}{
		// --rate 2000: req/s constant, p99 from 2 ms to 100 ms.
		{"open loop, p99 varies", []Run{autoRun(2000, 2000, 2000), autoRun(2000, 2000, 100000), autoRun(2000, 2000, 48000)},
			"p99", false, rsd(2000, 100000, 48000)},
		// --rate 2000, the server falling behind: req/s varies, p99 steady.
		{"open loop, p99 steady", []Run{autoRun(2000, 2000, 5000), autoRun(2000, 1500, 5000), autoRun(2000, 1000, 5000)},
			"p99", true, 0},
		// closed loop: req/s varies, p99 steady.
		{"closed loop, req/s varies", []Run{autoRun(0, 20000, 500), autoRun(0, 15000, 500), autoRun(0, 40000, 500)},
			"req/s", false, rsd(20000, 15000, 40000)},
		// closed loop: req/s steady, p99 varies.
		{"closed loop, p99 varies", []Run{autoRun(0, 20000, 500), autoRun(0, 20000, 5000), autoRun(0, 20000, 50000)},
			"req/s", true, 0},
	} {
		fig, _ := Judged(tc.runs)
		stable, got := a.Stable(tc.runs)
		// The histogram keeps 3 significant digits: the figures come back
		// within 0.1 %.
		if fig != tc.figure || stable != tc.stable || math.Abs(got-tc.rsd) > 0.01*tc.rsd+0.01 {
			t.Errorf("%s: judged %s, stable %v, rsd %.2f %%; want %s, %v, %.2f %%", tc.name, fig, stable, got, tc.figure, tc.stable, tc.rsd)
		}
		if a.enough(tc.runs, time.Second) != tc.stable {
			t.Errorf("%s: enough after 3 runs %v, want %v", tc.name, !tc.stable, tc.stable)
		}
		res := &wire.Result{}
		MarkAuto(res, tc.runs, a)
		wantJudged := ""
		if tc.figure == "p99" {
			wantJudged = "p99"
		}
		if res.Repeat.Judged != wantJudged || *res.Repeat.Stable != tc.stable || (wantJudged != "" && math.Abs(res.Repeat.JudgedRSDPct-got) > 1e-9) {
			t.Errorf("%s: the result's repeat judged %q (%.2f %%), stable %v", tc.name, res.Repeat.Judged, res.Repeat.JudgedRSDPct, *res.Repeat.Stable)
		}
	}
}
