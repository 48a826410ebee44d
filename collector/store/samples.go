package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/edgebench/edgebench/collector/store/sqldb"
	"github.com/edgebench/edgebench/wire"
)

// Samples apart from summaries: a result's bulk is kept in result_samples
// and its summary in results.raw (package retention says why and prunes
// them).

// Kept says what the store still holds of a result.
type Kept struct {
	// SamplesPruned says its runs' per-second samples, timelines and
	// histograms were pruned (older than --keep-samples): the result
	// holds its summary, the figures, fingerprint, verdicts and the
	// probe's summary over each window.
	SamplesPruned bool `json:"samples_pruned,omitempty"`
}

// ResultKept returns a stored result as it came, or its summary once its
// samples were pruned, and which of the two it is.
func (s *Store) ResultKept(ctx context.Context, id string) (*wire.Result, Kept, error) {
	var summary sql.NullBool
	var raw, full []byte
	err := s.db.QueryRow(ctx, s.db.R, `SELECT r.summary, r.raw, sa.raw FROM results r
		LEFT JOIN result_samples sa ON sa.result_id = r.id AND sa.received = r.received WHERE r.id = ?`, id).Scan(&summary, &raw, &full)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Kept{}, fmt.Errorf("result %s: %w", id, sqldb.ErrNotFound)
	}
	if err != nil {
		return nil, Kept{}, fmt.Errorf("result %s: %w", id, s.db.Wrap(err))
	}
	k := Kept{SamplesPruned: summary.Valid && summary.Bool && full == nil}
	if full != nil {
		raw = full
	}
	// A joined result holds two devices' payloads: MaxStoredPayload.
	r, err := wire.DecodeResultMax(raw, MaxStoredPayload)
	if err != nil {
		return nil, k, fmt.Errorf("result %s: stored payload: %w", id, err)
	}
	return r, k, nil
}
