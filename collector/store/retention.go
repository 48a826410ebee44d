package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// pruneChunk is how many results one pruning transaction deletes, so that
// the writer is never held for long.
const pruneChunk = 500

// Pruned counts what Prune deleted.
type Pruned struct {
	Results, Commands, Events int64
	Pairs                     int64 // runs across two devices, with the results kept for them
}

// Prune deletes the results the collector received before cutoff, with
// their runs (the samples are in their payloads), and the commands issued,
// events received and runs across two devices started before it (with
// the results kept for them), in transactions of at most pruneChunk
// results. The collector's receive time decides, not the device's clock: a
// result stamped in 2096 goes when its time comes.
func (s *Store) Prune(ctx context.Context, cutoff time.Time) (Pruned, error) {
	var p Pruned
	before := cutoff.UnixNano()
	for {
		rows, err := s.query(ctx, s.w, "SELECT id FROM results WHERE received < ? ORDER BY received, id LIMIT ?", before, pruneChunk)
		if err != nil {
			return p, fmt.Errorf("prune: %w", err)
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return p, fmt.Errorf("prune: %w", err)
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return p, fmt.Errorf("prune: %w", s.wrap(err))
		}
		if len(ids) == 0 {
			break
		}
		n, err := s.deleteResults(ctx, ids)
		p.Results += n
		if err != nil {
			return p, err
		}
		if len(ids) < pruneChunk {
			break
		}
	}
	for _, t := range []struct {
		n     *int64
		query string
	}{
		{&p.Events, "DELETE FROM events WHERE received < ?"},
		{&p.Commands, "DELETE FROM commands WHERE issued_at < ?"},
		{&p.Pairs, "DELETE FROM pairs WHERE created < ?"},
		{new(int64), "DELETE FROM pair_parts WHERE received < ?"},
	} {
		res, err := s.exec(ctx, s.w, t.query, before)
		if err != nil {
			return p, fmt.Errorf("prune: %w", err)
		}
		*t.n, _ = res.RowsAffected()
	}
	if _, err := s.exec(ctx, s.w, "DELETE FROM command_targets WHERE command_id NOT IN (SELECT id FROM commands)"); err != nil {
		return p, fmt.Errorf("prune: %w", err)
	}
	return p, nil
}

// deleteResults deletes the results ids with their runs and specs in one
// transaction.
func (s *Store) deleteResults(ctx context.Context, ids []string) (int64, error) {
	list, _ := json.Marshal(ids) // strings: cannot fail
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("prune: %w", s.wrap(err))
	}
	defer tx.Rollback()
	var n int64
	for _, table := range []struct{ name, col string }{{"runs", "result_id"}, {"result_specs", "result_id"}, {"results", "id"}} {
		res, err := s.exec(ctx, tx, "DELETE FROM "+table.name+" WHERE "+s.d.inJSON(table.col), string(list))
		if err != nil {
			return 0, fmt.Errorf("prune %s: %w", table.name, err)
		}
		n, _ = res.RowsAffected()
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("prune: commit: %w", s.wrap(err))
	}
	return n, nil
}
