package measure

import (
	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/wire"
)

// AddRuns adds the runs to res as the wire carries them: each run with
// what the probe saw, the spread of repeated runs, the probe's warnings,
// and what the runs tell of the device to its fingerprint (the target's
// Server header, throttling during a run).
func AddRuns(res *wire.Result, runs []Run) {
	for _, r := range runs {
		w := FromRun(r.Load, r.System)
		if v := r.Verdict; v != nil {
			w.Verdict = &wire.Verdict{LimitedBy: v.LimitedBy, Valid: v.Valid, Reasons: v.Reasons}
		}
		res.Runs = append(res.Runs, w)
		if r.System != nil {
			res.Warnings = append(res.Warnings, r.System.Warnings...)
			if t := r.System.Summary.Throttled; t != nil && t.Any() {
				res.Fingerprint.Throttled = true
			}
		}
		if res.Fingerprint.Server == "" {
			res.Fingerprint.Server = r.Load.Server
		}
	}
	if len(runs) > 1 {
		res.Repeat = RepeatOf(report.Summarize(Loads(runs)))
	}
}

// Loads lists what the load generator measured in each run.
func Loads(runs []Run) []*report.LoadResult {
	out := make([]*report.LoadResult, len(runs))
	for i, r := range runs {
		out[i] = r.Load
	}
	return out
}

// OK counts the successful responses of the runs, the drained ones
// included: none means the target was not measured.
func OK(runs []Run) int64 {
	var ok int64
	for _, r := range runs {
		ok += r.Load.AllOK()
	}
	return ok
}
