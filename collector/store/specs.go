package store

import (
	"context"
	"fmt"

	"github.com/edgebench/edgebench/collector/group"
	"github.com/edgebench/edgebench/wire"
)

// backfillSpecs gives each result stored before specs were kept its spec,
// decoded from its payload. It does nothing once every result has one.
func (s *Store) backfillSpecs(ctx context.Context) error {
	rows, err := s.db.Query(ctx, s.db.W, `SELECT r.id, r.raw FROM results r
		WHERE NOT EXISTS (SELECT 1 FROM result_specs sp WHERE sp.result_id = r.id)`)
	if err != nil {
		return fmt.Errorf("backfill specs: %w", err)
	}
	specs := map[string]string{}
	for rows.Next() {
		var id string
		var raw []byte
		if err := rows.Scan(&id, &raw); err != nil {
			rows.Close()
			return fmt.Errorf("backfill specs: %w", err)
		}
		spec := ""
		if r, err := wire.DecodeResult(raw); err == nil {
			spec = group.ResultSpec(r).Key()
		}
		specs[id] = spec
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("backfill specs: %w", err)
	}
	if len(specs) == 0 {
		return nil
	}
	tx, err := s.db.W.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("backfill specs: %w", err)
	}
	defer tx.Rollback()
	for id, spec := range specs {
		if _, err := s.db.Exec(ctx, tx, "INSERT INTO result_specs (result_id, spec) VALUES (?, ?) ON CONFLICT DO NOTHING", id, spec); err != nil {
			return fmt.Errorf("backfill specs: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("backfill specs: %w", err)
	}
	return nil
}
