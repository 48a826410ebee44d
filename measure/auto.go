package measure

import (
	"time"

	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/wire"
)

// Auto is --repeat auto: at least Min runs, then more while the relative
// standard deviation of the judged figure is above RSDPct, at most Max
// runs, and no new run once Budget has passed or the next run would end
// after it (a run is expected to last as long as the longest so far).
// The judged figure is req/s in closed loop; in open loop (--rate) the
// rate fixes req/s, so it is latency's p99, the figure read there.
type Auto struct {
	RSDPct float64       // 0: DefaultRSDPct
	Max    int           // 0: DefaultMaxRuns
	Budget time.Duration // 0: none
}

// The defaults of --repeat auto: the Phoronix Test Suite's 3.5 %, at
// least 3 runs and at most 10.
const (
	DefaultRSDPct  = 3.5
	MinAutoRuns    = 3
	DefaultMaxRuns = 10
)

func (a *Auto) max() int {
	if a.Max <= 0 {
		return DefaultMaxRuns
	}
	return max(a.Max, 1)
}

func (a *Auto) rsd() float64 {
	if a.RSDPct <= 0 {
		return DefaultRSDPct
	}
	return a.RSDPct
}

// enough reports whether the runs measured so far, elapsed after the
// first began, need no more.
func (a *Auto) enough(runs []Run, elapsed time.Duration) bool {
	if len(runs) >= a.max() {
		return true
	}
	if len(runs) >= MinAutoRuns {
		if stable, _ := a.Stable(runs); stable {
			return true
		}
	}
	if a.Budget > 0 && len(runs) > 0 {
		var longest time.Duration
		for _, r := range runs {
			longest = max(longest, r.Load.Duration+r.Load.Warmup)
		}
		if elapsed+longest > a.Budget {
			return true
		}
	}
	return false
}

// Stable reports whether the runs' judged figure (Judged) is steady
// enough: at least MinAutoRuns of them, with a relative standard
// deviation at most the threshold. It returns that deviation too, in %.
func (a *Auto) Stable(runs []Run) (bool, float64) {
	_, rsd := Judged(runs)
	return len(runs) >= MinAutoRuns && rsd <= a.rsd(), rsd
}

// Judged is the figure --repeat auto judges the runs' stability on and
// its relative standard deviation across them, in %: "req/s" in closed
// loop; "p99" (latency) in open loop, where the rate fixes req/s and a
// steady req/s says nothing.
func Judged(runs []Run) (string, float64) {
	s := report.Summarize(Loads(runs))
	if len(runs) == 0 || runs[0].Load.Rate <= 0 {
		return "req/s", s.RSD
	}
	if s.P99.Mean <= 0 {
		return "p99", 0
	}
	return "p99", 100 * s.P99.StdDev / s.P99.Mean
}

// MarkAuto says in res's spread that its runs were a's: whether they
// became stable, and the threshold.
func MarkAuto(res *wire.Result, runs []Run, a *Auto) {
	if a == nil || len(runs) == 0 {
		return
	}
	if res.Repeat == nil {
		res.Repeat = RepeatOf(report.Summarize(Loads(runs)))
	}
	stable, rsd := a.Stable(runs)
	res.Repeat.Auto, res.Repeat.Stable, res.Repeat.MaxRSDPct = true, &stable, a.rsd()
	if fig, _ := Judged(runs); fig != "req/s" {
		res.Repeat.Judged, res.Repeat.JudgedRSDPct = fig, rsd
	}
	res.Spec.RepeatAuto, res.Spec.RepeatRSDPct, res.Spec.RepeatBudgetMS = true, a.rsd(), a.Budget.Milliseconds()
	res.Spec.Repeat = a.max()
}
