package collector

import (
	"fmt"
	"strings"

	"github.com/edgebench/edgebench/verdict"
	"github.com/edgebench/edgebench/wire"
)

// VerdictOf is a run's verdict as the device judged it; nil for runs
// recorded before verdicts.
func VerdictOf(r *wire.Run) *verdict.Verdict {
	if r == nil || r.Verdict == nil {
		return nil
	}
	return &verdict.Verdict{LimitedBy: r.Verdict.LimitedBy, Valid: r.Verdict.Valid, Reasons: r.Verdict.Reasons}
}

// ResultVerdict sums up the verdicts of a result's runs in a few words:
// "server", "NOT VALID: generator" (the first invalid run's), or "" when
// no run has a verdict.
func ResultVerdict(res *wire.Result) string {
	var limited []string
	for i := range res.Runs {
		v := res.Runs[i].Verdict
		if v == nil {
			continue
		}
		if !v.Valid {
			return "NOT VALID: " + v.LimitedBy
		}
		limited = append(limited, v.LimitedBy)
	}
	if len(limited) == 0 {
		return ""
	}
	return mostCommon(limited)
}

// GeneratorBoundResult reports whether any run of res was limited by the
// load generator.
func GeneratorBoundResult(res *wire.Result) bool {
	for i := range res.Runs {
		if v := res.Runs[i].Verdict; v != nil && v.LimitedBy == verdict.Generator {
			return true
		}
	}
	return false
}

func mostCommon(ws []string) string {
	n := map[string]int{}
	best := ws[0]
	for _, w := range ws {
		n[w]++
		if n[w] > n[best] {
			best = w
		}
	}
	return best
}

// StableText is --repeat auto's outcome: "stable (1.2 %)" or "not stable
// (6.1 %)" with the relative standard deviation of req/s; "" for other
// repeats.
func StableText(rp *wire.Repeat) string {
	if rp == nil || !rp.Auto || rp.Stable == nil {
		return ""
	}
	word := "stable"
	if !*rp.Stable {
		word = "not stable"
	}
	return fmt.Sprintf("%s (%s %%) after %d runs", word, strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.1f", rp.RSDPct), "0"), "."), rp.Runs)
}
