package seriesdb

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/edgebench/edgebench/collector/stats"
	"github.com/edgebench/edgebench/collector/store/sqldb"
	"github.com/edgebench/edgebench/wire"
)

// RebuildOptions say what RebuildSeries does.
type RebuildOptions struct {
	// Detect, when set, are the detector's options from now on (the
	// ingest's too); nil keeps the store's.
	Detect *stats.DetectOptions
	// OnlyPending resumes a rebuild under way (the one a migration
	// started, or one interrupted) and does nothing when there is none.
	// Otherwise a rebuild under way with the same options is resumed, and
	// any other starts over.
	OnlyPending bool
	// Restart starts over even when a rebuild with the same options is
	// under way.
	Restart bool
}

// RebuildProgress is what a rebuild has done so far.
type RebuildProgress struct {
	Devices, Results, Series, Changes int
	Resumed                           bool // it went on from where one under way was
	Done                              bool
}

// rebuildBatch is how many devices one listing of the rebuild reads.
const rebuildBatch = 50

// RebuildSeries rebuilds every series' state and its final changes from
// the stored results: for a new figure or detector, after a migration,
// or with new options (Detect). It takes one device at a time, in one
// transaction each that replaces the device's series and changes and
// moves the checkpoint (series_rebuild) past the device, so that an
// interrupted rebuild resumes where it stopped. The collector goes on
// meanwhile: its ingest keeps the state of the devices done, and leaves
// the others to the rebuild, which reads their results as they are when
// it comes to them. The changes a rebuild finds count as alerted:
// history, not news. progress, when set, is called after each device.
func (s *SeriesTables) RebuildSeries(ctx context.Context, o RebuildOptions, progress func(RebuildProgress)) (RebuildProgress, error) {
	var p RebuildProgress
	cfg, err := s.seriesConfig(ctx, s.db.W)
	if err != nil {
		return p, err
	}
	opts := cfg.opts
	if o.Detect != nil {
		opts = *o.Detect
	}
	same := o.Detect == nil || *o.Detect == cfg.opts
	switch {
	case o.OnlyPending && !cfg.pending:
		p.Done = true
		return p, nil
	case cfg.pending && same && !o.Restart:
		p.Resumed = cfg.after != wire.Addr{}
	default:
		b, _ := json.Marshal(opts) // numbers: cannot fail
		if _, err := s.db.Exec(ctx, s.db.W, `UPDATE series_rebuild SET options = ?, pending = 1, after_fleet = '', after_device = '', devices = 0,
			started_at = ?, done_at = 0 WHERE id = 1`, string(b), time.Now().UnixNano()); err != nil {
			return p, fmt.Errorf("rebuild series: %w", err)
		}
		cfg.after = wire.Addr{}
	}
	after := cfg.after
	for {
		devs, err := s.devicesAfter(ctx, after, rebuildBatch)
		if err != nil {
			return p, err
		}
		if len(devs) == 0 {
			done, err := s.finishRebuild(ctx, after)
			if err != nil || done {
				p.Done = done
				return p, err
			}
			continue // a device came meanwhile
		}
		for _, a := range devs {
			if err := ctx.Err(); err != nil {
				return p, err
			}
			n, err := s.rebuildDevice(ctx, a, after, opts)
			if err != nil {
				return p, fmt.Errorf("rebuild series of %s/%s: %w", a.Fleet, a.Device, err)
			}
			p.Devices++
			p.Results += n.Results
			p.Series += n.Series
			p.Changes += n.Changes
			after = a
			if progress != nil {
				progress(p)
			}
		}
	}
}

// devicesAfter lists at most n devices after a, in order.
func (s *SeriesTables) devicesAfter(ctx context.Context, a wire.Addr, n int) ([]wire.Addr, error) {
	rows, err := s.db.Query(ctx, s.db.W, "SELECT fleet, id FROM devices WHERE (fleet, id) > (?, ?) ORDER BY fleet, id LIMIT ?", a.Fleet, a.Device, n)
	if err != nil {
		return nil, fmt.Errorf("rebuild series: %w", err)
	}
	defer rows.Close()
	var out []wire.Addr
	for rows.Next() {
		var d wire.Addr
		if err := rows.Scan(&d.Fleet, &d.Device); err != nil {
			return nil, fmt.Errorf("rebuild series: %w", s.db.Wrap(err))
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("rebuild series: %w", s.db.Wrap(err))
	}
	return out, nil
}

// finishRebuild ends the rebuild once no device is left after the last
// done, and reports whether it did. In PostgreSQL it holds off new
// devices' ingest while it looks (a SHARE lock on devices waits for the
// transactions writing it): one that was creating a device after the
// checkpoint left its result to the rebuild.
func (s *SeriesTables) finishRebuild(ctx context.Context, after wire.Addr) (bool, error) {
	tx, err := s.db.W.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("rebuild series: %w", s.db.Wrap(err))
	}
	defer tx.Rollback()
	if s.db.D.PG {
		if _, err := s.db.Exec(ctx, tx, "LOCK TABLE devices IN SHARE MODE"); err != nil {
			return false, fmt.Errorf("rebuild series: %w", err)
		}
	}
	var one int
	err = s.db.QueryRow(ctx, tx, "SELECT 1 FROM devices WHERE (fleet, id) > (?, ?) LIMIT 1", after.Fleet, after.Device).Scan(&one)
	switch {
	case err == nil:
		return false, nil
	case err != sql.ErrNoRows:
		return false, fmt.Errorf("rebuild series: %w", s.db.Wrap(err))
	}
	if _, err := s.db.Exec(ctx, tx, "UPDATE series_rebuild SET pending = 0, done_at = ? WHERE id = 1", time.Now().UnixNano()); err != nil {
		return false, fmt.Errorf("rebuild series: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("rebuild series: %w", s.db.Wrap(err))
	}
	return true, nil
}

// rebuildDevice rebuilds the series of device a, done after the device
// prev, in one transaction: it locks the device's row (so that its
// ingest waits, and then sees the checkpoint past it) and the rebuild's
// (so that two rebuilds take turns), reads every succeeded result of the
// device in order, replaces its series and changes and moves the
// checkpoint to it. A checkpoint moved meanwhile by another rebuild
// leaves the device to that one.
func (s *SeriesTables) rebuildDevice(ctx context.Context, a, prev wire.Addr, o stats.DetectOptions) (RebuildProgress, error) {
	var p RebuildProgress
	tx, err := s.db.W.BeginTx(ctx, nil)
	if err != nil {
		return p, s.db.Wrap(err)
	}
	defer tx.Rollback()
	lock := ""
	if s.db.D.PG {
		lock = " FOR UPDATE"
	}
	var after wire.Addr
	var pending int
	if err := s.db.QueryRow(ctx, tx, "SELECT pending, after_fleet, after_device FROM series_rebuild WHERE id = 1"+lock).
		Scan(&pending, &after.Fleet, &after.Device); err != nil {
		return p, s.db.Wrap(err)
	}
	if pending == 0 || after != prev {
		return p, nil // another rebuild is at it
	}
	if _, err := s.db.Exec(ctx, tx, "SELECT 1 FROM devices WHERE fleet = ? AND id = ?"+lock, a.Fleet, a.Device); err != nil {
		return p, err
	}
	all, err := s.history(ctx, tx, a)
	if err != nil {
		return p, err
	}
	series := map[string]*seriesRow{}
	var keys []string
	var finals []Change
	for _, r := range all {
		row := series[r.key]
		if row == nil {
			row = &seriesRow{key: r.key, fleet: a.Fleet, device: a.Device, spec: r.spec, labels: r.split, state: &seriesState{},
				latest: [nMetrics]float64{math.NaN(), math.NaN(), math.NaN()}}
			series[r.key] = row
			keys = append(keys, r.key)
		}
		fs, _ := row.take(r.taken, o)
		for _, f := range fs {
			finals = append(finals, row.change(f.metric, f.Found))
		}
	}
	for _, q := range []string{"DELETE FROM series WHERE fleet = ? AND device = ?", "DELETE FROM series_dropped WHERE fleet = ? AND device = ?",
		"DELETE FROM changes WHERE kind = 'change' AND fleet = ? AND device = ?"} {
		if _, err := s.db.Exec(ctx, tx, q, a.Fleet, a.Device); err != nil {
			return p, err
		}
	}
	now := time.Now().UnixNano()
	for _, k := range keys {
		row := series[k]
		lj, err := s.db.D.LabelsJSON(row.labels)
		if err != nil {
			return p, err
		}
		if _, err := s.db.Exec(ctx, tx, "INSERT INTO series (key, fleet, device, spec, labels, state) VALUES (?,?,?,?,?,?)",
			k, a.Fleet, a.Device, row.spec, lj, encodeState(nil, row.state)); err != nil {
			return p, err
		}
		if err := s.writeSeries(ctx, tx, row, o, now); err != nil {
			return p, err
		}
	}
	if err := s.storeChanges(ctx, tx, finals, now, now); err != nil {
		return p, err
	}
	if err := s.capExported(ctx, tx, a); err != nil {
		return p, err
	}
	if _, err := s.db.Exec(ctx, tx, "UPDATE series_rebuild SET after_fleet = ?, after_device = ?, devices = devices + 1 WHERE id = 1",
		a.Fleet, a.Device); err != nil {
		return p, err
	}
	if err := tx.Commit(); err != nil {
		return p, s.db.Wrap(err)
	}
	return RebuildProgress{Results: len(all), Series: len(keys), Changes: len(finals)}, nil
}

// histResult is a stored result of a device as its series take it.
type histResult struct {
	taken
	key   string
	split map[string]string
	spec  string
}

// history reads the succeeded results of device a, in the series' order
// (start time, then id), with what the series take of each.
func (s *SeriesTables) history(ctx context.Context, q sqldb.Querier, a wire.Addr) ([]*histResult, error) {
	rows, err := s.db.Query(ctx, q, `SELECT r.id, r.started, r.received, r.labels, coalesce(sp.spec, ''), r.url, r.connections, r.server, r.throttled,
		u.rps, u.p99_us, u.cpu_pct, u.limited_by, u.valid
		FROM results r LEFT JOIN runs u ON u.result_id = r.id LEFT JOIN result_specs sp ON sp.result_id = r.id
		WHERE r.fleet = ? AND r.device = ? AND r.outcome = 'succeeded' ORDER BY r.started, r.id, u.idx`, a.Fleet, a.Device)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var all []*histResult
	var cur *histResult
	var runs []runFigure
	end := func() {
		if cur != nil {
			cur.v, cur.out = resultValues(runs)
		}
		runs = runs[:0]
	}
	for rows.Next() {
		var id, labels, spec, url, server string
		var started, received int64
		var conns int
		var thr bool
		var rps, p99, cpu sql.NullFloat64
		var limitedBy sql.NullString
		var valid sql.NullBool
		if err := rows.Scan(&id, &started, &received, &labels, &spec, &url, &conns, &server, &thr, &rps, &p99, &cpu, &limitedBy, &valid); err != nil {
			return nil, s.db.Wrap(err)
		}
		if cur == nil || cur.id != id {
			end()
			var lm map[string]string
			if err := json.Unmarshal([]byte(labels), &lm); err != nil {
				return nil, fmt.Errorf("result %s: labels: %w", id, err)
			}
			sp := sqldb.ParseSpec(spec, url, conns)
			key, split := SeriesKey(a.Fleet, a.Device, sp, lm)
			cur = &histResult{taken: taken{seriesResult{id: id, started: started, received: received, thr: thr}, metricsServer(split, server)},
				key: key, split: split, spec: sp.String()}
			all = append(all, cur)
		}
		if rps.Valid { // a run (a result without runs has none)
			f := runFigure{rps: rps.Float64, p99us: sqldb.Float(p99), cpuPct: sqldb.Float(cpu)}
			if invalid, _ := sqldb.RunVerdict(limitedBy, valid); invalid {
				f.invalid, f.limitedBy = true, limitedBy.String
			}
			runs = append(runs, f)
		}
	}
	end()
	if err := rows.Err(); err != nil {
		return nil, s.db.Wrap(err)
	}
	return all, nil
}

// SeriesResult is a result of a series as the detector takes it: Values
// per SeriesMetrics (NaN: none), LeftOut what limited its runs when none
// was valid (the detector leaves it out).
type SeriesResult struct {
	ID        string
	Started   time.Time
	Values    [3]float64
	LeftOut   string
	Throttled bool
}

// SeriesHistory is a series with every stored result of it, in order.
type SeriesHistory struct {
	Key, Spec string
	Labels    map[string]string
	Results   []SeriesResult
}

// SeriesHistories reads the series of device a from its stored results,
// as a rebuild does: what the whole-series detection runs over.
func (s *SeriesTables) SeriesHistories(ctx context.Context, a wire.Addr) ([]SeriesHistory, error) {
	all, err := s.history(ctx, s.db.R, a)
	if err != nil {
		return nil, fmt.Errorf("series of %s/%s: %w", a.Fleet, a.Device, err)
	}
	var out []SeriesHistory
	at := map[string]int{}
	for _, r := range all {
		i, ok := at[r.key]
		if !ok {
			i = len(out)
			at[r.key] = i
			out = append(out, SeriesHistory{Key: r.key, Spec: r.spec, Labels: r.split})
		}
		out[i].Results = append(out[i].Results, SeriesResult{ID: r.id, Started: time.Unix(0, r.started), Values: r.v, LeftOut: r.out, Throttled: r.thr})
	}
	return out, nil
}

// SeriesRebuild is the state of the series' rebuild: Pending while one is
// under way, with the devices done; the detector's options.
type SeriesRebuild struct {
	Pending bool
	Devices int64
	Detect  stats.DetectOptions
}

// SeriesRebuildState reads the state of the series' rebuild.
func (s *SeriesTables) SeriesRebuildState(ctx context.Context) (SeriesRebuild, error) {
	var r SeriesRebuild
	cfg, err := s.seriesConfig(ctx, s.db.R)
	if err != nil {
		return r, err
	}
	r.Pending, r.Detect = cfg.pending, cfg.opts
	if err := s.db.QueryRow(ctx, s.db.R, "SELECT devices FROM series_rebuild WHERE id = 1").Scan(&r.Devices); err != nil {
		return r, fmt.Errorf("series rebuild: %w", s.db.Wrap(err))
	}
	return r, nil
}
