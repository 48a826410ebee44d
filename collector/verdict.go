package collector

import (
	"context"
	"errors"
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

// withVerdicts sets each run's Invalid and GeneratorBound from the
// verdicts in its result's payload (the store keeps no column of them),
// and leaves the invalid runs out when exclude is set. runs come in the
// order of their index within each result.
func (s *Store) withVerdicts(ctx context.Context, runs []GroupedRun, exclude bool) ([]GroupedRun, error) {
	verdicts := map[string][]*wire.Verdict{}
	next := map[string]int{}
	out := runs[:0]
	for _, r := range runs {
		vs, ok := verdicts[r.ResultID]
		if !ok {
			res, err := s.Result(ctx, r.ResultID)
			if err != nil && !unreadable(ctx, err) {
				return nil, err
			}
			if err == nil {
				for i := range res.Runs {
					vs = append(vs, res.Runs[i].Verdict)
				}
			}
			verdicts[r.ResultID] = vs
		}
		i := next[r.ResultID]
		next[r.ResultID]++
		if i < len(vs) && vs[i] != nil {
			r.Invalid, r.GeneratorBound = !vs[i].Valid, vs[i].LimitedBy == verdict.Generator
		}
		if exclude && r.Invalid {
			continue
		}
		out = append(out, r)
	}
	return out, nil
}

// noDifferenceOfGenerators withdraws a significant difference between
// two groups when a run of either was limited by the load generator:
// its figure is a lower bound of the server's, not the server's.
func noDifferenceOfGenerators(d Delta, base, other *Group) Delta {
	if base.GeneratorBound == 0 && other.GeneratorBound == 0 {
		return d
	}
	d.Significant = false
	d.Note = "runs limited by the load generator (their figure is a lower bound): no difference is stated"
	return d
}

// AddVerdicts sets each row's Verdict and Stable from its result's
// payload (the store keeps no column of them).
func (s *Store) AddVerdicts(ctx context.Context, rows []RunRow) error {
	for i := range rows {
		res, err := s.Result(ctx, rows[i].ID)
		if unreadable(ctx, err) {
			continue // a payload stored before the decoder refused it has no verdict to show
		}
		if err != nil {
			return err
		}
		rows[i].Verdict, rows[i].Stable = ResultVerdict(res), StableText(res.Repeat)
	}
	return nil
}

// unreadable says err is a stored payload that no longer decodes, not a
// store that is away: its result is shown without a verdict.
func unreadable(ctx context.Context, err error) bool {
	return err != nil && ctx.Err() == nil && !Unavailable(err) && !errors.Is(err, ErrNotFound) &&
		!errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled)
}
