package store

import (
	"context"
	"fmt"

	"github.com/edgebench/edgebench/collector/figures"
	"github.com/edgebench/edgebench/wire"
)

// recountErrors sets the errors of the runs of the results the
// errors_recount migration listed (stored when TLS set-ups and HTTP/2
// resets were left out) to figures.ErrorTotal of their payloads, a batch at a
// time, and empties the list. It does nothing once the list is empty.
func (s *Store) recountErrors(ctx context.Context) error {
	for {
		rows, err := s.db.Query(ctx, s.db.W, `SELECT p.result_id, coalesce(r.raw, '') FROM errors_recount p
			LEFT JOIN results r ON r.id = p.result_id ORDER BY p.result_id LIMIT 200`)
		if err != nil {
			return fmt.Errorf("recount errors: %w", err)
		}
		var ids []string
		totals := map[string][]int64{}
		for rows.Next() {
			var id string
			var raw []byte
			if err := rows.Scan(&id, &raw); err != nil {
				rows.Close()
				return fmt.Errorf("recount errors: %w", err)
			}
			ids = append(ids, id)
			if r, err := wire.DecodeResult(raw); err == nil {
				for _, run := range r.Runs {
					totals[id] = append(totals[id], figures.ErrorTotal(run.Errors))
				}
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("recount errors: %w", err)
		}
		if len(ids) == 0 {
			return nil
		}
		tx, err := s.db.W.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("recount errors: %w", err)
		}
		for _, id := range ids {
			for j, n := range totals[id] {
				if _, err := s.db.Exec(ctx, tx, "UPDATE runs SET errors = ? WHERE result_id = ? AND idx = ?", n, id, j); err != nil {
					tx.Rollback()
					return fmt.Errorf("recount errors: %w", err)
				}
			}
			if _, err := s.db.Exec(ctx, tx, "DELETE FROM errors_recount WHERE result_id = ?", id); err != nil {
				tx.Rollback()
				return fmt.Errorf("recount errors: %w", err)
			}
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("recount errors: %w", err)
		}
	}
}
