package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/edgebench/edgebench/collector/rebuild"
	"github.com/edgebench/edgebench/wire"
)

// summarize sums up the verdicts of a result's runs (nil for a run
// without one) in a few words: "server", "NOT VALID: generator" (the
// first invalid run's), or "" when no run has a verdict.
func summarize(vs []*wire.Verdict) string {
	var limited []string
	for _, v := range vs {
		if v == nil {
			continue
		}
		if !v.Valid {
			return "NOT VALID: " + v.LimitedBy
		}
		limited = append(limited, v.LimitedBy)
	}
	if len(limited) == 0 {
		return ""
	}
	return mostCommon(limited)
}

func mostCommon(ws []string) string {
	n := map[string]int{}
	best := ws[0]
	for _, w := range ws {
		n[w]++
		if n[w] > n[best] {
			best = w
		}
	}
	return best
}

// AddVerdicts sets each row's Verdict and Stable from the store's
// columns of its runs' verdicts and its repeat, in one query.
func (s *Store) AddVerdicts(ctx context.Context, rows []RunRow) error {
	if len(rows) == 0 {
		return nil
	}
	ids := make([]string, len(rows))
	for i := range rows {
		ids[i] = rows[i].ID
	}
	list, _ := json.Marshal(ids) // strings: cannot fail
	rs, err := s.db.Query(ctx, s.db.R, `SELECT r.id, r.stable, r.stable_rsd_pct, r.stable_runs, r.stable_on, u.limited_by, u.valid
		FROM results r LEFT JOIN runs u ON u.result_id = r.id WHERE `+s.db.D.InJSON("r.id")+` ORDER BY r.id, u.idx`, string(list))
	if err != nil {
		return fmt.Errorf("verdicts: %w", err)
	}
	defer rs.Close()
	type summary struct {
		runs []*wire.Verdict
		rep  *wire.Repeat
	}
	of := make(map[string]*summary, len(rows))
	for rs.Next() {
		var id string
		var stable, valid sql.NullBool
		var rsd sql.NullFloat64
		var n sql.NullInt64
		var limitedBy, on sql.NullString
		if err := rs.Scan(&id, &stable, &rsd, &n, &on, &limitedBy, &valid); err != nil {
			return fmt.Errorf("verdicts: %w", err)
		}
		sm := of[id]
		if sm == nil {
			sm = &summary{rep: repeatOf(stable, rsd, n, on)}
			of[id] = sm
		}
		if limitedBy.Valid && valid.Valid {
			sm.runs = append(sm.runs, &wire.Verdict{LimitedBy: limitedBy.String, Valid: valid.Bool})
		}
	}
	if err := rs.Err(); err != nil {
		return fmt.Errorf("verdicts: %w", err)
	}
	for i := range rows {
		if sm := of[rows[i].ID]; sm != nil {
			rows[i].Verdict, rows[i].Stable = summarize(sm.runs), rebuild.StableText(sm.rep)
		}
	}
	return nil
}

// verdictColumns are the store's columns of a run's verdict, limited_by
// and valid: NULL for a run recorded before verdicts.
func verdictColumns(v *wire.Verdict) (limitedBy, valid any) {
	if v == nil {
		return nil, nil
	}
	return v.LimitedBy, v.Valid
}

// repeatColumns are the store's columns of --repeat auto's outcome,
// stable, stable_rsd_pct, stable_runs and stable_on: NULL where
// StableText says nothing. The RSD is the judged figure's: req/s's, or
// (stable_on set, open loop) that figure's.
func repeatColumns(rp *wire.Repeat) (stable, rsdPct, runs, on any) {
	if rp == nil || !rp.Auto || rp.Stable == nil {
		return nil, nil, nil, nil
	}
	if rp.Judged != "" {
		return *rp.Stable, rp.JudgedRSDPct, rp.Runs, rp.Judged
	}
	return *rp.Stable, rp.RSDPct, rp.Runs, nil
}

// repeatOf reads the repeat columns back, as much of the repeat as
// StableText needs; nil where they are NULL.
func repeatOf(stable sql.NullBool, rsdPct sql.NullFloat64, runs sql.NullInt64, on sql.NullString) *wire.Repeat {
	if !stable.Valid {
		return nil
	}
	b := stable.Bool
	if on.Valid {
		return &wire.Repeat{Auto: true, Stable: &b, Judged: on.String, JudgedRSDPct: rsdPct.Float64, Runs: int(runs.Int64)}
	}
	return &wire.Repeat{Auto: true, Stable: &b, RSDPct: rsdPct.Float64, Runs: int(runs.Int64)}
}

// VerdictBackfill is what backfillVerdicts did: results whose columns
// it filled from their payloads, runs given a verdict, results whose
// payload did not decode (left without one).
type VerdictBackfill struct {
	Results, Runs, Undecodable int
}

// backfillVerdicts fills the verdict columns of the runs, and the repeat
// columns, of the results the verdicts migration listed (stored before
// the columns were) from their payloads, a batch at a time, and empties
// the list. A payload that does not decode, or holds no verdict, leaves
// them NULL: no verdict, as before. It does nothing once the list is
// empty, and a batch done twice (two collectors opening a store at once)
// writes the same.
func (s *Store) backfillVerdicts(ctx context.Context) (VerdictBackfill, error) {
	var done VerdictBackfill
	for {
		rows, err := s.db.Query(ctx, s.db.W, `SELECT p.result_id, coalesce(r.raw, '') FROM verdicts_backfill p
			LEFT JOIN results r ON r.id = p.result_id ORDER BY p.result_id LIMIT 200`)
		if err != nil {
			return done, fmt.Errorf("backfill verdicts: %w", err)
		}
		var ids []string
		decoded := map[string]*wire.Result{}
		for rows.Next() {
			var id string
			var raw []byte
			if err := rows.Scan(&id, &raw); err != nil {
				rows.Close()
				return done, fmt.Errorf("backfill verdicts: %w", err)
			}
			ids = append(ids, id)
			if r, err := wire.DecodeResult(raw); err == nil {
				decoded[id] = r
			} else if len(raw) > 0 {
				done.Undecodable++
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return done, fmt.Errorf("backfill verdicts: %w", err)
		}
		if len(ids) == 0 {
			return done, nil
		}
		if err := s.backfillBatch(ctx, ids, decoded, &done); err != nil {
			return done, fmt.Errorf("backfill verdicts: %w", err)
		}
		done.Results += len(ids)
	}
}

// backfillBatch fills the columns of a batch of listed results, decoded
// (nil: the payload did not decode), and takes them off the list, in one
// transaction of three prepared statements.
func (s *Store) backfillBatch(ctx context.Context, ids []string, decoded map[string]*wire.Result, done *VerdictBackfill) error {
	runs := 0
	err := s.backfillTx(ctx, []string{"UPDATE runs SET limited_by = ?, valid = ? WHERE result_id = ? AND idx = ?",
		"UPDATE results SET stable = ?, stable_rsd_pct = ?, stable_runs = ?, stable_on = ? WHERE id = ?",
		"DELETE FROM verdicts_backfill WHERE result_id = ?"}, func(exec func(int, ...any) error) error {
		for _, id := range ids {
			if r := decoded[id]; r != nil {
				for j := range r.Runs {
					if r.Runs[j].Verdict == nil {
						continue
					}
					limitedBy, valid := verdictColumns(r.Runs[j].Verdict)
					if err := exec(0, limitedBy, valid, id, j); err != nil {
						return fmt.Errorf("%s: %w", id, err)
					}
					runs++
				}
				if stable, rsd, n, on := repeatColumns(r.Repeat); stable != nil {
					if err := exec(1, stable, rsd, n, on, id); err != nil {
						return fmt.Errorf("%s: %w", id, err)
					}
				}
			}
			if err := exec(2, id); err != nil {
				return fmt.Errorf("%s: %w", id, err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	done.Runs += runs
	return nil
}

// backfillTx runs fill in one transaction, with queries prepared on it:
// fill's exec(i, args...) runs the i-th. A backfill's batch: a few
// statements, run for each result of the batch.
func (s *Store) backfillTx(ctx context.Context, queries []string, fill func(exec func(i int, args ...any) error) error) error {
	tx, err := s.db.W.BeginTx(ctx, nil)
	if err != nil {
		return s.db.Wrap(err)
	}
	defer tx.Rollback()
	stmts := make([]*sql.Stmt, len(queries))
	for i, q := range queries {
		if stmts[i], err = tx.PrepareContext(ctx, s.db.D.Q(q)); err != nil {
			return s.db.Wrap(err)
		}
		defer stmts[i].Close()
	}
	exec := func(i int, args ...any) error {
		_, err := stmts[i].ExecContext(ctx, s.db.D.Args(args)...)
		return s.db.Wrap(err)
	}
	if err := fill(exec); err != nil {
		return err
	}
	return s.db.Wrap(tx.Commit())
}
