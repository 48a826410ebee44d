package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/edgebench/edgebench/collector/figures"
	"github.com/edgebench/edgebench/collector/store/sqldb"
	"github.com/edgebench/edgebench/wire"
)

// backfillRuns fills the figures the seeds' tables added to compare
// (stdev_us, cpu_idle_pct, server_cpu_pct) of the runs of the results the
// scale migration listed (stored before the columns were), and their
// payload's size, from their payloads, a batch at a time, and empties
// the list. A payload that does not decode leaves them NULL. It does
// nothing once the list is empty; a batch done twice (two collectors
// opening a store at once) writes the same.
func (s *Store) backfillRuns(ctx context.Context) error {
	for {
		rows, err := s.db.Query(ctx, s.db.W, `SELECT p.result_id, coalesce(r.raw, '') FROM runs_backfill p
			LEFT JOIN results r ON r.id = p.result_id ORDER BY p.result_id LIMIT 200`)
		if err != nil {
			return fmt.Errorf("backfill runs: %w", err)
		}
		var ids []string
		decoded := map[string]*wire.Result{}
		size := map[string]int{}
		for rows.Next() {
			var id string
			var raw []byte
			if err := rows.Scan(&id, &raw); err != nil {
				rows.Close()
				return fmt.Errorf("backfill runs: %w", s.db.Wrap(err))
			}
			ids = append(ids, id)
			size[id] = len(raw)
			if r, err := wire.DecodeResult(raw); err == nil {
				decoded[id] = r
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("backfill runs: %w", s.db.Wrap(err))
		}
		if len(ids) == 0 {
			return nil
		}
		if err := s.backfillRunsBatch(ctx, ids, decoded, size); err != nil {
			return fmt.Errorf("backfill runs: %w", err)
		}
	}
}

func (s *Store) backfillRunsBatch(ctx context.Context, ids []string, decoded map[string]*wire.Result, size map[string]int) error {
	return s.backfillTx(ctx, []string{"UPDATE runs SET stdev_us = ?, cpu_idle_pct = ?, server_cpu_pct = ? WHERE result_id = ? AND idx = ?",
		"UPDATE results SET payload_bytes = coalesce(payload_bytes, ?) WHERE id = ?",
		"DELETE FROM runs_backfill WHERE result_id = ?"}, func(exec func(int, ...any) error) error {
		for _, id := range ids {
			if r := decoded[id]; r != nil {
				for j, f := range runFigures(r) {
					if err := exec(0, sqldb.Null(f.StdevUS), sqldb.Null(f.CPUIdle), sqldb.Null(f.ServerCPU), id, j); err != nil {
						return fmt.Errorf("%s: %w", id, err)
					}
				}
				if err := exec(1, size[id], id); err != nil {
					return fmt.Errorf("%s: %w", id, err)
				}
			}
			if err := exec(2, id); err != nil {
				return fmt.Errorf("%s: %w", id, err)
			}
		}
		return nil
	})
}

// RunFigures are the figures the store keeps of each of a result's runs,
// in order: what is left of its latency once its histograms are pruned.
func (s *Store) RunFigures(ctx context.Context, id string) ([]figures.Run, error) {
	rows, err := s.db.Query(ctx, s.db.R, `SELECT started, duration_s, completed, rps, mean_us, p50_us, p99_us, max_us, stdev_us,
		timeouts, errors, err_connect, err_read, err_write, err_status, err_length,
		cpu_pct, cpu_user_pct, cpu_idle_pct, server_cpu_pct, io_kbs, mem_kb, cached_kb, temp_c, throttled, capacity_rps, limited_by, valid
		FROM runs WHERE result_id = ? ORDER BY idx`, id)
	if err != nil {
		return nil, fmt.Errorf("figures of %s: %w", id, err)
	}
	defer rows.Close()
	var out []figures.Run
	for rows.Next() {
		var f figures.Run
		var started int64
		var mean, p50, p99, mx, stdev, cpu, user, idle, server, io, mem, cached, temp, capRPS sql.NullFloat64
		var limitedBy sql.NullString
		var valid sql.NullBool
		e := &f.ErrBy
		if err := rows.Scan(&started, &f.DurationS, &f.Completed, &f.RPS, &mean, &p50, &p99, &mx, &stdev,
			&f.Timeouts, &f.Errors, &e.Connect, &e.Read, &e.Write, &e.Status, &e.Length,
			&cpu, &user, &idle, &server, &io, &mem, &cached, &temp, &f.Throttled, &capRPS, &limitedBy, &valid); err != nil {
			return nil, fmt.Errorf("figures of %s: %w", id, s.db.Wrap(err))
		}
		e.Timeout = f.Timeouts
		f.Started = sqldb.UnixTime(started)
		f.MeanUS, f.P50US, f.P99US, f.MaxUS, f.StdevUS = sqldb.Float(mean), sqldb.Float(p50), sqldb.Float(p99), sqldb.Float(mx), sqldb.Float(stdev)
		f.CPUPct, f.CPUUser, f.CPUIdle, f.ServerCPU = sqldb.Float(cpu), sqldb.Float(user), sqldb.Float(idle), sqldb.Float(server)
		f.IOKBs, f.MemKB, f.CachedKB, f.TempC, f.CapacityRPS = sqldb.Float(io), sqldb.Float(mem), sqldb.Float(cached), sqldb.Float(temp), sqldb.Float(capRPS)
		f.Invalid, f.GeneratorBound = sqldb.RunVerdict(limitedBy, valid)
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("figures of %s: %w", id, s.db.Wrap(err))
	}
	return out, nil
}
