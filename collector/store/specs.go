package store

import (
	"context"
	"fmt"

	"github.com/edgebench/edgebench/collector/group"
	"github.com/edgebench/edgebench/wire"
)

// backfillSpecs gives each result stored before specs were kept its spec,
// decoded from its payload: those specs_backfill lists (the migration
// listed them once; a result stored since has its spec from the ingest),
// taken off the list as they are done. It reads the list, not the
// results: nothing once it is empty.
func (s *Store) backfillSpecs(ctx context.Context) error {
	rows, err := s.db.Query(ctx, s.db.W, `SELECT b.result_id, r.raw FROM specs_backfill b LEFT JOIN results r ON r.id = b.result_id`)
	if err != nil {
		return fmt.Errorf("backfill specs: %w", err)
	}
	specs := map[string]string{}
	gone := map[string]bool{} // pruned since it was listed
	for rows.Next() {
		var id string
		var raw []byte
		if err := rows.Scan(&id, &raw); err != nil {
			rows.Close()
			return fmt.Errorf("backfill specs: %w", err)
		}
		if raw == nil {
			gone[id] = true
			continue
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
	if len(specs) == 0 && len(gone) == 0 {
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
		gone[id] = true
	}
	for id := range gone {
		if _, err := s.db.Exec(ctx, tx, "DELETE FROM specs_backfill WHERE result_id = ?", id); err != nil {
			return fmt.Errorf("backfill specs: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("backfill specs: %w", err)
	}
	return nil
}
