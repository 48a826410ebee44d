package retention

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/edgebench/edgebench/collector/summary"
)

// Day is the UTC day of the collector's receive time ns, as the number of
// days since the Unix epoch: a PostgreSQL partition of result_samples.
func Day(ns int64) int64 {
	const d = int64(24 * time.Hour)
	if ns < 0 {
		return (ns - d + 1) / d
	}
	return ns / d
}

// partition is the name of day's table of result_samples.
func partition(day int64) string {
	return "result_samples_" + time.Unix(day*86400, 0).UTC().Format("20060102")
}

// partitionLock is the key of the advisory lock under which a collector
// creates a day's table of result_samples ("edgepart").
const partitionLock = 0x6564676570617274

// EnsureDays makes sure PostgreSQL's result_samples has a table for each
// of days (SQLite has one table: nothing to do). A collector creates them
// ahead (today's and the next two, at start and every hour); a result
// received on a day without one (a store's clock past midnight before the
// hour's pass, a test's old receive time) creates it here, before the
// ingest's transaction takes its locks.
func (s *Pruner) EnsureDays(ctx context.Context, days []int64) error {
	if !s.db.D.PG {
		return nil
	}
	var missing []int64
	s.partsMu.Lock()
	for _, d := range days {
		if !s.parts[d] {
			missing = append(missing, d)
		}
	}
	s.partsMu.Unlock()
	if len(missing) == 0 {
		return nil
	}
	sort.Slice(missing, func(i, j int) bool { return missing[i] < missing[j] })
	tx, err := s.db.W.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("samples partitions: %w", s.db.Wrap(err))
	}
	defer tx.Rollback()
	// One collector at a time: two creating one table at once would fail.
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", int64(partitionLock)); err != nil {
		return fmt.Errorf("samples partitions: %w", s.db.Wrap(err))
	}
	const d = int64(24 * time.Hour)
	for _, day := range missing {
		q := fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s PARTITION OF result_samples FOR VALUES FROM (%d) TO (%d)",
			partition(day), day*d, (day+1)*d)
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("samples partition %s: %w", partition(day), s.db.Wrap(err))
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("samples partitions: %w", s.db.Wrap(err))
	}
	s.partsMu.Lock()
	for _, d := range missing {
		s.parts[d] = true
	}
	s.partsMu.Unlock()
	return nil
}

// PrepareDays makes the tables of result_samples for the day of now and
// the next two ahead, on PostgreSQL (nothing on SQLite): the retention
// loop calls it every hour, so that the ingest finds them there.
func (s *Pruner) PrepareDays(ctx context.Context, now time.Time) error {
	d := Day(now.UnixNano())
	return s.EnsureDays(ctx, []int64{d, d + 1, d + 2})
}

// samplesDays are the days of result_samples' tables on PostgreSQL,
// oldest first.
func (s *Pruner) samplesDays(ctx context.Context) ([]int64, error) {
	rows, err := s.db.Query(ctx, s.db.W, `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = 'result_samples' AND p.relnamespace = current_schema()::regnamespace`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, s.db.Wrap(err)
		}
		t, err := time.Parse("20060102", strings.TrimPrefix(name, "result_samples_"))
		if err != nil {
			continue // not one of ours
		}
		out = append(out, t.Unix()/86400)
	}
	if err := rows.Err(); err != nil {
		return nil, s.db.Wrap(err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

// pruneSamples prunes the samples of the results received before cutoff:
// on SQLite it deletes them, PruneChunk at a time; on PostgreSQL it drops
// each day's table that ends at or before cutoff, whole (a day that
// straddles cutoff goes the next day: samples are kept up to a day longer
// than asked, never shorter). The results stored before samples were kept
// apart (samples_legacy) are rewritten as summaries.
func (s *Pruner) pruneSamples(ctx context.Context, cutoff time.Time, p *Pruned) error {
	before := cutoff.UnixNano()
	if s.db.D.PG {
		days, err := s.samplesDays(ctx)
		if err != nil {
			return fmt.Errorf("prune samples: %w", err)
		}
		const d = int64(24 * time.Hour)
		for _, day := range days {
			if (day+1)*d > before {
				break
			}
			var n int64
			if err := s.db.QueryRow(ctx, s.db.W, "SELECT count(*) FROM "+partition(day)).Scan(&n); err != nil {
				return fmt.Errorf("prune samples %s: %w", partition(day), s.db.Wrap(err))
			}
			if _, err := s.db.Exec(ctx, s.db.W, "DROP TABLE IF EXISTS "+partition(day)); err != nil {
				return fmt.Errorf("prune samples %s: %w", partition(day), err)
			}
			s.partsMu.Lock()
			delete(s.parts, day)
			s.partsMu.Unlock()
			p.Samples += n
			p.SampleDays++
		}
	} else {
		for {
			res, err := s.db.Exec(ctx, s.db.W, `DELETE FROM result_samples WHERE result_id IN
				(SELECT result_id FROM result_samples WHERE received < ? ORDER BY received LIMIT ?)`, before, PruneChunk)
			if err != nil {
				return fmt.Errorf("prune samples: %w", err)
			}
			n, _ := res.RowsAffected()
			p.Samples += n
			if n < PruneChunk {
				break
			}
		}
	}
	return s.stripLegacy(ctx, before, p)
}

// stripLegacy rewrites the results of samples_legacy received before
// before as summaries, a chunk at a time, and takes them off the list.
// A payload that does not parse, or holds no samples, is left as it is.
func (s *Pruner) stripLegacy(ctx context.Context, before int64, p *Pruned) error {
	for {
		rows, err := s.db.Query(ctx, s.db.W, `SELECT l.received, l.result_id, r.raw FROM samples_legacy l
			LEFT JOIN results r ON r.id = l.result_id WHERE l.received < ? ORDER BY l.received, l.result_id LIMIT ?`, before, PruneChunk/5)
		if err != nil {
			return fmt.Errorf("prune samples: %w", err)
		}
		type legacy struct {
			received int64
			id       string
			summary  []byte
		}
		var list []legacy
		for rows.Next() {
			var l legacy
			var raw []byte
			if err := rows.Scan(&l.received, &l.id, &raw); err != nil {
				rows.Close()
				return fmt.Errorf("prune samples: %w", s.db.Wrap(err))
			}
			if sum, err := summary.Of(raw); err == nil {
				l.summary = sum
			}
			list = append(list, l)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("prune samples: %w", s.db.Wrap(err))
		}
		if len(list) == 0 {
			return nil
		}
		tx, err := s.db.W.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("prune samples: %w", s.db.Wrap(err))
		}
		for _, l := range list {
			if l.summary != nil {
				if _, err := s.db.Exec(ctx, tx, "UPDATE results SET raw = ?, summary = ? WHERE id = ?", l.summary, true, l.id); err != nil {
					tx.Rollback()
					return fmt.Errorf("prune samples: %w", err)
				}
				p.Legacy++
			}
			if _, err := s.db.Exec(ctx, tx, "DELETE FROM samples_legacy WHERE received = ? AND result_id = ?", l.received, l.id); err != nil {
				tx.Rollback()
				return fmt.Errorf("prune samples: %w", err)
			}
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("prune samples: %w", s.db.Wrap(err))
		}
	}
}
