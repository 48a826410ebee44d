package measure

import (
	"errors"
	"testing"
	"time"

	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/wire"
)

// TestNewResultIsTheEnvelope: the envelope says who, when and answering
// what, with the device's fingerprint, and a copy of its labels (a
// command's labels added to the result leave the device's alone).
func TestNewResultIsTheEnvelope(t *testing.T) {
	labels := map[string]string{"rack": "a"}
	at := time.Date(2026, 3, 1, 13, 0, 0, 0, time.FixedZone("CET", 3600))
	r := NewResult(Origin{ID: "r1", CommandID: "c1", Fleet: "lab", Device: "pi-1", BootID: "b1", Kind: wire.KindCapacity,
		At: at, Info: &wire.DeviceInfo{Board: "Raspberry Pi 4", Cores: 4}, Labels: labels})
	if r.V != wire.SchemaVersion || r.ID != "r1" || r.CommandID != "c1" || r.Fleet != "lab" || r.Device != "pi-1" ||
		r.BootID != "b1" || r.Kind != wire.KindCapacity || !r.CreatedAt.Equal(at) || r.CreatedAt.Location() != time.UTC ||
		r.Fingerprint.Board != "Raspberry Pi 4" || r.Fingerprint.Cores != 4 || r.Outcome != "" || len(r.Runs) != 0 {
		t.Errorf("envelope %+v", r)
	}
	r.Labels["server"] = "nginx"
	if r.Labels["rack"] != "a" || len(labels) != 1 {
		t.Errorf("labels %v, the device's %v", r.Labels, labels)
	}
	if r := NewResult(Origin{}); r.Labels == nil {
		t.Error("no labels: a nil map, where a command's labels are added")
	}
}

// TestFinishSaysHowItEnded: a stop wins over a failure (a cancelled run
// has no successful response for that reason), a timeout is told from a
// cancel, and a failure's reason is its error's text.
func TestFinishSaysHowItEnded(t *testing.T) {
	failed := errors.New("dial tcp 127.0.0.1:1: connection refused")
	for _, c := range []struct {
		stop   Stop
		err    error
		state  wire.EventState
		reason string
	}{
		{Stop{}, nil, wire.StateSucceeded, ""},
		{Stop{}, failed, wire.StateFailed, failed.Error()},
		{Stop{Reason: "cancelled"}, failed, wire.StateCancelled, "cancelled"},
		{Stop{TimedOut: true, Reason: "over its time budget of 1m0s"}, failed, wire.StateTimedOut, "over its time budget of 1m0s"},
	} {
		r := &wire.Result{Outcome: wire.StateRunning, Reason: "left over"}
		Finish(r, c.stop, c.err)
		if r.Outcome != c.state || r.Reason != c.reason {
			t.Errorf("%+v, %v: %s %q, want %s %q", c.stop, c.err, r.Outcome, r.Reason, c.state, c.reason)
		}
	}
}

// TestNoSuccessIsOneText: the text of runs without a successful response
// names the failures of the measured window and of the drain, as the
// errors line does; a successful response anywhere, the drain included,
// is a success.
func TestNoSuccessIsOneText(t *testing.T) {
	run := func(l report.LoadResult) Run { return Run{Load: &l} }
	refused := run(report.LoadResult{Errors: report.Errors{Connect: 10, TLS: 1}})
	timedOut := run(report.LoadResult{Drained: report.Drained{Requests: 3, Errors: report.Errors{Timeout: 3}}})
	if err := NoSuccess([]Run{refused}); err == nil || err.Error() != "no successful response (errors: connect 10, tls 1)" {
		t.Errorf("refused: %v", err)
	}
	want := "no successful response (errors in the measured window: none; drained at the end: 3 in flight, 0 completed, failed: timeout 3)"
	if err := NoSuccess([]Run{refused, timedOut}); err == nil || err.Error() != want {
		t.Errorf("repeated, the last timed out: %v, want %s", err, want)
	}
	if got := NoSuccessText("in the first trial, at 20 req/s", refused.Load); got != "no successful response in the first trial, at 20 req/s (errors: connect 10, tls 1)" {
		t.Errorf("a trial's: %s", got)
	}
	drainedOK := run(report.LoadResult{Drained: report.Drained{Requests: 1, Completed: 1, OK: 1}})
	if err := NoSuccess([]Run{refused, drainedOK}); err != nil {
		t.Errorf("a response that completed in the drain: %v", err)
	}
	if err := NoSuccess(nil); err != nil {
		t.Errorf("no runs: %v", err)
	}
}
