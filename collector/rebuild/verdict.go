package rebuild

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

// StableText is --repeat auto's outcome: "stable (1.2 %)" or "not stable
// (6.1 %)" with the relative standard deviation of req/s, or "stable on
// p99 (2.1 %)" for the figure judged in open loop; "" for other repeats.
func StableText(rp *wire.Repeat) string {
	if rp == nil || !rp.Auto || rp.Stable == nil {
		return ""
	}
	word := "stable"
	if !*rp.Stable {
		word = "not stable"
	}
	if rp.Judged != "" { // open loop: judged on latency, not on the rate's req/s
		word, rp = word+" on "+rp.Judged, &wire.Repeat{RSDPct: rp.JudgedRSDPct, Runs: rp.Runs}
	}
	return fmt.Sprintf("%s (%s %%) after %d runs", word, strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.1f", rp.RSDPct), "0"), "."), rp.Runs)
}
