package measure

import (
	"errors"
	"maps"
	"time"

	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/wire"
)

// A result's life: NewResult makes its envelope (who sends it, when,
// answering what), the caller sets its spec and adds its runs (AddRuns,
// MarkAuto; a watch and a capacity search add theirs), and Finish says
// how it ended. The agent, `edgebench run --publish` and a capacity
// command all go through these, so a result says the same thing of the
// same ending wherever it was made.

// Origin is what a result's envelope says of where it comes from.
type Origin struct {
	ID        string // the result's id (wire.NewID)
	CommandID string // the command it answers; "" for edgebench run --publish
	// Fleet and Device name the device; "" when the publisher fills them
	// (run --publish, from its flags).
	Fleet, Device string
	BootID        string
	Kind          wire.CommandKind
	At            time.Time         // when the result was made
	Info          *wire.DeviceInfo  // the device, for the result's fingerprint
	Labels        map[string]string // the device's labels; the result has a copy
}

// NewResult is the envelope of a result from o: no spec, no runs, no
// outcome yet.
func NewResult(o Origin) *wire.Result {
	r := &wire.Result{
		V: wire.SchemaVersion, ID: o.ID, CommandID: o.CommandID, Fleet: o.Fleet, Device: o.Device,
		BootID: o.BootID, CreatedAt: o.At.UTC(), Kind: o.Kind, Labels: map[string]string{},
		Fingerprint: FingerprintOf(o.Info),
	}
	maps.Copy(r.Labels, o.Labels)
	return r
}

// Stop is why a measurement ended before its end; the zero Stop: it did
// not.
type Stop struct {
	// TimedOut says it ran out of its time (the agent's budget); else it
	// was cancelled or interrupted.
	TimedOut bool
	Reason   string
}

// Stopped reports whether the measurement was stopped.
func (s Stop) Stopped() bool { return s.TimedOut || s.Reason != "" }

// Finish sets res's outcome and its reason: timed out or cancelled when
// stop says the measurement was stopped, else failed when err says why
// (NoSuccess's error for runs without a successful response), else
// succeeded.
func Finish(res *wire.Result, stop Stop, err error) {
	switch {
	case stop.TimedOut:
		res.Outcome, res.Reason = wire.StateTimedOut, stop.Reason
	case stop.Stopped():
		res.Outcome, res.Reason = wire.StateCancelled, stop.Reason
	case err != nil:
		res.Outcome, res.Reason = wire.StateFailed, err.Error()
	default:
		res.Outcome, res.Reason = wire.StateSucceeded, ""
	}
}

// NoSuccess is the failure of runs none of which had a successful
// response, the drained ones included: the target was not measured. Its
// text is NoSuccessText of the last run. nil when a run had one, or
// there are no runs.
func NoSuccess(runs []Run) error {
	if len(runs) == 0 || OK(runs) > 0 {
		return nil
	}
	return errors.New(NoSuccessText("", runs[len(runs)-1].Load))
}

// NoSuccessText is the one text of a run without a successful response,
// with how its requests failed in the measured window and among those
// drained at its end, in the errors line's terms: "no successful response
// (errors: connect 10)". where, when not "", says which run: "in the
// first trial, at 20 req/s".
func NoSuccessText(where string, l *report.LoadResult) string {
	s := "no successful response"
	if where != "" {
		s += " " + where
	}
	return s + " (" + report.FailureSummary(l) + ")"
}

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
