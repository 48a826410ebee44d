package retention

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// PruneChunk is how many rows one pruning transaction deletes, so that
// the writer is never held for long.
const PruneChunk = 500

// Pruned counts what pruning deleted.
type Pruned struct {
	Results, Commands, Events int64
	Pairs                     int64 // runs across two devices, with the results kept for them
	// Samples counts the results whose samples (the payload as it came)
	// went, SampleDays PostgreSQL's day tables dropped, Legacy the results
	// stored before samples were kept apart that were rewritten as
	// summaries.
	Samples, SampleDays, Legacy int64
	// ScheduleRuns counts the schedules' firings, Changes the changes and
	// alerts raised.
	ScheduleRuns, Changes int64
}

// Retention says what to prune: what is older than each time goes (the
// collector's own receive, issue, firing and finding times decide, not a
// device's clock). A zero time keeps everything of its kind.
type Retention struct {
	// Results: the results (their summaries, runs and specs) received
	// before it, the commands issued and events received before it, the
	// runs across two devices started before it (with the results kept
	// for them), the schedules' firings fired before it, and the changes
	// and alerts found before it. Each kind keeps what the kept rows
	// still refer to: a command while a kept result or event names it
	// (and its targets with it), a schedule's latest firing, the latest
	// alert of each series and kind (so that a standing condition is not
	// raised again), a change while its result is kept.
	Results time.Time
	// Samples: the per-second samples and histograms of the results
	// received before it (their summaries stay). Results' time, when
	// later, applies to them too.
	Samples time.Time
}

// Prune prunes everything older than cutoff: results with their samples,
// and what Retention.Results names.
func (s *Pruner) Prune(ctx context.Context, cutoff time.Time) (Pruned, error) {
	return s.Retain(ctx, Retention{Results: cutoff, Samples: cutoff})
}

// Retain prunes what r says, each kind in transactions of at most
// PruneChunk rows: samples first, then results, events, commands (with
// their targets), schedules' firings, changes and alerts.
func (s *Pruner) Retain(ctx context.Context, r Retention) (Pruned, error) {
	var p Pruned
	samples := r.Samples
	if samples.IsZero() || r.Results.After(samples) {
		samples = r.Results
	}
	if !samples.IsZero() {
		if err := s.pruneSamples(ctx, samples, &p); err != nil {
			return p, err
		}
	}
	if r.Results.IsZero() {
		return p, nil
	}
	before := r.Results.UnixNano()
	for {
		ids, err := s.ids(ctx, "SELECT id FROM results WHERE received < ? ORDER BY received, id LIMIT ?", before, PruneChunk)
		if err != nil {
			return p, fmt.Errorf("prune: %w", err)
		}
		if len(ids) == 0 {
			break
		}
		n, err := s.deleteResults(ctx, ids)
		p.Results += n
		if err != nil {
			return p, err
		}
		if len(ids) < PruneChunk {
			break
		}
	}
	var err error
	if p.Events, err = s.deleteChunks(ctx, `DELETE FROM events WHERE (command_id, fleet, device, seq) IN
		(SELECT command_id, fleet, device, seq FROM events WHERE received < ? ORDER BY received LIMIT ?)`, before); err != nil {
		return p, fmt.Errorf("prune events: %w", err)
	}
	// Runs across two devices: a few at a time, each its two parts.
	for _, t := range []struct {
		n     *int64
		query string
	}{
		{&p.Pairs, "DELETE FROM pairs WHERE created < ?"},
		{new(int64), "DELETE FROM pair_parts WHERE received < ?"},
	} {
		res, err := s.db.Exec(ctx, s.db.W, t.query, before)
		if err != nil {
			return p, fmt.Errorf("prune: %w", err)
		}
		*t.n, _ = res.RowsAffected()
	}
	// A command goes with its targets once no kept result or event names
	// it.
	for {
		ids, err := s.ids(ctx, `SELECT c.id FROM commands c WHERE c.issued_at < ?
			AND NOT EXISTS (SELECT 1 FROM results r WHERE r.command_id = c.id)
			AND NOT EXISTS (SELECT 1 FROM events e WHERE e.command_id = c.id)
			ORDER BY c.issued_at, c.id LIMIT ?`, before, PruneChunk)
		if err != nil {
			return p, fmt.Errorf("prune commands: %w", err)
		}
		if len(ids) == 0 {
			break
		}
		n, err := s.deleteCommands(ctx, ids)
		p.Commands += n
		if err != nil {
			return p, err
		}
		if len(ids) < PruneChunk {
			break
		}
	}
	if p.ScheduleRuns, err = s.deleteChunks(ctx, `DELETE FROM schedule_runs WHERE (schedule, due_at) IN
		(SELECT f.schedule, f.due_at FROM schedule_runs f WHERE f.fired_at < ?
			AND f.due_at < (SELECT max(l.due_at) FROM schedule_runs l WHERE l.schedule = f.schedule)
			ORDER BY f.fired_at LIMIT ?)`, before); err != nil {
		return p, fmt.Errorf("prune schedule firings: %w", err)
	}
	if p.Changes, err = s.deleteChunks(ctx, `DELETE FROM changes WHERE seq IN
		(SELECT c.seq FROM changes c WHERE c.detected_at < ?
			AND NOT EXISTS (SELECT 1 FROM results r WHERE r.id = c.result_id)
			AND c.detected_at < (SELECT max(l.detected_at) FROM changes l WHERE l.series = c.series AND l.metric = c.metric)
			ORDER BY c.detected_at LIMIT ?)`, before); err != nil {
		return p, fmt.Errorf("prune changes: %w", err)
	}
	return p, nil
}

// ids runs query, of one text column, and returns its rows.
func (s *Pruner) ids(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := s.db.Query(ctx, s.db.W, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, s.db.Wrap(err)
		}
		ids = append(ids, id)
	}
	return ids, s.db.Wrap(rows.Err())
}

// deleteChunks runs del, a DELETE of at most its second argument's rows
// older than its first, until one deletes fewer, and counts the rows.
func (s *Pruner) deleteChunks(ctx context.Context, del string, before int64) (int64, error) {
	var total int64
	for {
		res, err := s.db.Exec(ctx, s.db.W, del, before, PruneChunk)
		if err != nil {
			return total, err
		}
		n, _ := res.RowsAffected()
		total += n
		if n < PruneChunk {
			return total, nil
		}
	}
}

// deleteResults deletes the results ids with their runs, specs, samples
// and backfill entries in one transaction.
func (s *Pruner) deleteResults(ctx context.Context, ids []string) (int64, error) {
	return s.deleteIn(ctx, ids, "prune", []struct{ name, col string }{{"runs", "result_id"}, {"result_specs", "result_id"},
		{"result_samples", "result_id"}, {"runs_backfill", "result_id"}, {"verdicts_backfill", "result_id"},
		{"errors_recount", "result_id"}, {"results", "id"}})
}

// deleteCommands deletes the commands ids with their targets in one
// transaction.
func (s *Pruner) deleteCommands(ctx context.Context, ids []string) (int64, error) {
	return s.deleteIn(ctx, ids, "prune commands", []struct{ name, col string }{{"command_targets", "command_id"}, {"commands", "id"}})
}

// deleteIn deletes the rows whose column is one of ids from each table in
// order, in one transaction, and counts those of the last table.
func (s *Pruner) deleteIn(ctx context.Context, ids []string, what string, tables []struct{ name, col string }) (int64, error) {
	list, _ := json.Marshal(ids) // strings: cannot fail
	tx, err := s.db.W.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, s.db.Wrap(err))
	}
	defer tx.Rollback()
	var n int64
	for _, table := range tables {
		res, err := s.db.Exec(ctx, tx, "DELETE FROM "+table.name+" WHERE "+s.db.D.InJSON(table.col), string(list))
		if err != nil {
			return 0, fmt.Errorf("%s %s: %w", what, table.name, err)
		}
		n, _ = res.RowsAffected()
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("%s: commit: %w", what, s.db.Wrap(err))
	}
	return n, nil
}
