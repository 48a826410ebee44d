package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/edgebench/edgebench/internal/durable"
)

// InterruptedReason is the failure reason of a run found in flight at start.
const InterruptedReason = "interrupted: agent restarted during the run"

const inflightFile = "inflight"

// Inflight marks the run in progress, so that a run cut short by a crash or
// a power loss is reported as failed after the next boot (SPEC 5).
//
// The daemon calls WriteInflight before the run starts, ClearInflight when
// it has ended (whatever its outcome) and its final event is spooled, and
// RecoverInflight once at start: when that returns a marker, it publishes a
// "failed" event with InterruptedReason and wire.SeqInterrupted for
// its command and then calls ClearInflight.
type Inflight struct {
	CommandID string    `json:"command_id"`
	ResultID  string    `json:"result_id"`
	StartedAt time.Time `json:"started_at"`
}

// WriteInflight writes the marker dir/inflight atomically.
func WriteInflight(dir string, in Inflight) error {
	if in.CommandID == "" {
		return errors.New("inflight: empty command id")
	}
	data, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("inflight: %w", err)
	}
	return durable.WriteFile(filepath.Join(dir, inflightFile), data, 0o600)
}

// ClearInflight removes the marker; no marker is not an error.
func ClearInflight(dir string) error {
	err := os.Remove(filepath.Join(dir, inflightFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("inflight: %w", err)
	}
	return durable.SyncDir(dir)
}

// RecoverInflight returns the marker left in dir by a run that did not end,
// or nil, nil when there is none. It leaves the marker in place: the caller
// clears it once the failure is reported. A marker that cannot be parsed
// (it cannot be half written, so this means outside damage) is returned as
// an error; the caller logs it and clears it.
func RecoverInflight(dir string) (*Inflight, error) {
	data, err := os.ReadFile(filepath.Join(dir, inflightFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("inflight: %w", err)
	}
	var in Inflight
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("inflight %s: %w", filepath.Join(dir, inflightFile), err)
	}
	if in.CommandID == "" {
		return nil, fmt.Errorf("inflight %s: no command id", filepath.Join(dir, inflightFile))
	}
	return &in, nil
}
