package seriesdb

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/edgebench/edgebench/collector/escape"
	"github.com/edgebench/edgebench/collector/figures"
	"github.com/edgebench/edgebench/collector/group"
	"github.com/edgebench/edgebench/collector/stats"
	"github.com/edgebench/edgebench/collector/store/sqldb"
	"github.com/edgebench/edgebench/wire"
)

// SeriesPerDevice is how many series of one device /metrics may export
// (Latest): those of its results the collector received last. A device
// that makes a new series with every result (a new label each time)
// pushes out its own older series, never another device's; the ones
// left out are counted per device (SeriesDropped).
const SeriesPerDevice = 32

// seriesConfig is the series_rebuild row: the detector's options, and
// while a rebuild is under way, the last device it has done (the ingest
// leaves the state of the devices after it to the rebuild).
type seriesConfig struct {
	opts    stats.DetectOptions
	pending bool
	after   wire.Addr
}

// leftToRebuild reports whether the rebuild under way has yet to do a.
func (c *seriesConfig) leftToRebuild(a wire.Addr) bool {
	return c.pending && cmp.Or(cmp.Compare(a.Fleet, c.after.Fleet), cmp.Compare(a.Device, c.after.Device)) > 0
}

func (s *SeriesTables) seriesConfig(ctx context.Context, q sqldb.Querier) (seriesConfig, error) {
	var c seriesConfig
	var opts string
	var pending int
	err := s.db.QueryRow(ctx, q, "SELECT options, pending, after_fleet, after_device FROM series_rebuild WHERE id = 1").
		Scan(&opts, &pending, &c.after.Fleet, &c.after.Device)
	if err != nil {
		return c, fmt.Errorf("series options: %w", s.db.Wrap(err))
	}
	if err := json.Unmarshal([]byte(opts), &c.opts); err != nil {
		return c, fmt.Errorf("series options %q: %w", opts, err)
	}
	c.pending = pending != 0
	return c, nil
}

// In is a result stored now, as the series take it.
type In struct {
	R                 *wire.Result
	Figs              []figures.Run
	Started, Received int64
}

// seriesOf is the series of result r and the labels that split it, as a
// rebuild reads them back from the store: its spec (with whether another
// device loaded it, group.ResultSpec, as result_specs keeps it) and
// labels through the JSON the store keeps (which makes text that is not
// UTF-8 valid, and in PostgreSQL takes out NUL).
func seriesOf(d sqldb.Dialect, r *wire.Result) (string, map[string]string, error) {
	sp := sqldb.ParseSpec(group.ResultSpec(r).Key(), r.Spec.URL, r.Spec.Connections)
	fleet, device, labels := r.Fleet, r.Device, r.Labels
	lj, err := d.LabelsJSON(labels)
	if err != nil {
		return "", nil, err
	}
	var back map[string]string
	if err := json.Unmarshal([]byte(lj), &back); err != nil {
		return "", nil, err
	}
	key, split := SeriesKey(fleet, device, sp, back)
	return key, split, nil
}

// runFigures are what the detector reads of a result's runs.
func detectorRuns(figs []figures.Run, runs []wire.Run) []runFigure {
	out := make([]runFigure, len(figs))
	for j, f := range figs {
		out[j] = runFigure{rps: f.RPS, p99us: f.P99US, cpuPct: f.CPUPct}
		if j < len(runs) && runs[j].Verdict != nil && !runs[j].Verdict.Valid {
			out[j].invalid, out[j].limitedBy = true, runs[j].Verdict.LimitedBy
		}
	}
	return out
}

// metricsServer is a result's server as /metrics labels it: its server
// label, or else the Server header's product without its version
// ("nginx/1.22.1" -> "nginx"), at most 64 bytes.
func metricsServer(labels map[string]string, server string) string {
	s := labels["server"]
	if s == "" {
		s = server
		for i := 0; i < len(s); i++ {
			if s[i] == '/' || s[i] == ' ' {
				s = s[:i]
				break
			}
		}
	}
	if len(s) > 64 {
		s = s[:64]
	}
	return s
}

// seriesRow is a series' row, read for its update.
type seriesRow struct {
	key, fleet, device, spec string
	labels                   map[string]string
	server                   string
	results, leftOut, late   int64
	latestID                 string
	latestStarted            int64
	latestReceived           int64
	latest                   [nMetrics]float64
	state                    *seriesState
}

// taken is a result of a series with what the series row keeps of it.
type taken struct {
	seriesResult
	server string
}

// IngestSeries feeds the results stored by an ingest to their series'
// state, in the ingest's transaction: each series' row is read locked,
// its results put in (in their order), and written back with the changes
// made final stored once. The devices' rows are locked already (by the
// ingest, in order), so two collectors' updates of a series, or of a
// device a rebuild is doing, come one after the other.
func (s *SeriesTables) IngestSeries(ctx context.Context, tx *sql.Tx, ins []In, now int64) error {
	cfg, err := s.seriesConfig(ctx, tx)
	if err != nil {
		return err
	}
	type one struct {
		fleet, device, spec string
		labels              map[string]string
		rs                  []taken
	}
	by := map[string]*one{}
	for _, in := range ins {
		r := in.R
		a := wire.Addr{Fleet: r.Fleet, Device: r.Device}
		if r.Outcome != wire.StateSucceeded || cfg.leftToRebuild(a) {
			continue
		}
		key, split, err := seriesOf(s.db.D, r)
		if err != nil {
			return fmt.Errorf("series of %s: %w", r.ID, err)
		}
		o := by[key]
		if o == nil {
			o = &one{fleet: r.Fleet, device: r.Device, spec: sqldb.ParseSpec(group.SpecOf(r.Spec).Key(), r.Spec.URL, r.Spec.Connections).String(), labels: split}
			by[key] = o
		}
		v, out := resultValues(detectorRuns(in.Figs, r.Runs))
		thr := r.Fingerprint.Throttled || r.Fingerprint.FreqDropped
		for _, f := range in.Figs {
			thr = thr || f.Throttled
		}
		o.rs = append(o.rs, taken{seriesResult{id: r.ID, started: in.Started, received: in.Received, v: v, out: out, thr: thr},
			metricsServer(split, r.Fingerprint.Server)})
	}
	if len(by) == 0 {
		return nil
	}
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	devices := map[wire.Addr]bool{}
	for _, key := range keys {
		o := by[key]
		row, err := s.lockSeries(ctx, tx, key, o.fleet, o.device, o.spec, o.labels, cfg.opts)
		if err != nil {
			return err
		}
		slices.SortFunc(o.rs, func(a, b taken) int {
			return cmp.Or(cmp.Compare(a.started, b.started), cmp.Compare(a.id, b.id))
		})
		var finals []Change
		for _, r := range o.rs {
			fs, late := row.take(r, cfg.opts)
			if late {
				continue
			}
			for _, f := range fs {
				finals = append(finals, row.change(f.metric, f.Found))
			}
		}
		if err := s.storeChanges(ctx, tx, finals, now, 0); err != nil {
			return err
		}
		if err := s.writeSeries(ctx, tx, row, cfg.opts, now); err != nil {
			return err
		}
		devices[wire.Addr{Fleet: o.fleet, Device: o.device}] = true
	}
	for _, a := range sqldb.SortedAddrs(devices) {
		if err := s.capExported(ctx, tx, a); err != nil {
			return err
		}
	}
	return nil
}

// take puts a result in the series row: its counts, its latest figures
// and its detector state. It returns the final changes the result makes,
// and late when it was left out of the detector as too late.
func (row *seriesRow) take(r taken, o stats.DetectOptions) ([]found, bool) {
	row.results++
	if r.out != "" {
		row.leftOut++
	} else if r.received > row.latestReceived || r.received == row.latestReceived && r.id > row.latestID {
		row.latestID, row.latestStarted, row.latestReceived, row.latest, row.server = r.id, r.started, r.received, r.v, r.server
	}
	fs, late := row.state.add(r.seriesResult, o)
	if late {
		row.late++
	}
	return fs, late
}

// lockSeries reads the row of series key for its update, locked until
// the transaction ends (PostgreSQL), creating it empty first if need be.
func (s *SeriesTables) lockSeries(ctx context.Context, tx *sql.Tx, key, fleet, device, spec string, labels map[string]string,
	o stats.DetectOptions) (*seriesRow, error) {
	for try := 0; ; try++ {
		row, err := s.readSeries(ctx, tx, key, o, true)
		if err != nil || row != nil {
			return row, err
		}
		if try > 0 {
			return nil, fmt.Errorf("series %s: not created", escape.Printable(key))
		}
		lj, err := s.db.D.LabelsJSON(labels)
		if err != nil {
			return nil, fmt.Errorf("series %s: %w", escape.Printable(key), err)
		}
		if _, err := s.db.Exec(ctx, tx, `INSERT INTO series (key, fleet, device, spec, labels, state) VALUES (?,?,?,?,?,?)
			ON CONFLICT (key) DO NOTHING`, key, fleet, device, spec, lj, encodeState(nil, &seriesState{})); err != nil {
			return nil, fmt.Errorf("series %s: %w", escape.Printable(key), err)
		}
	}
}

// readSeries reads a series' row (nil when there is none), locked for
// update when lock is set. A state that does not read back starts again
// empty: the series' detection restarts (a rebuild takes it all in again).
func (s *SeriesTables) readSeries(ctx context.Context, q sqldb.Querier, key string, o stats.DetectOptions, lock bool) (*seriesRow, error) {
	query := `SELECT fleet, device, spec, labels, server, results, left_out, late, latest_id, latest_started, latest_received,
		rps, p99_us, cpu_per_kreq, state FROM series WHERE key = ?`
	if lock && s.db.D.PG {
		query += " FOR UPDATE"
	}
	row := &seriesRow{key: key}
	var labels string
	var v [nMetrics]sql.NullFloat64
	var state []byte
	err := s.db.QueryRow(ctx, q, query, key).Scan(&row.fleet, &row.device, &row.spec, &labels, &row.server, &row.results, &row.leftOut,
		&row.late, &row.latestID, &row.latestStarted, &row.latestReceived, &v[0], &v[1], &v[2], &state)
	if err == sql.ErrNoRows {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("series %s: %w", escape.Printable(key), s.db.Wrap(err))
	}
	for m := range v {
		row.latest[m] = sqldb.Float(v[m])
	}
	if err := json.Unmarshal([]byte(labels), &row.labels); err != nil {
		return nil, fmt.Errorf("series %s: labels: %w", escape.Printable(key), err)
	}
	if row.state, err = decodeState(state, o); err != nil {
		row.state = &seriesState{}
	}
	return row, nil
}

// writeSeries writes a series' row back, with its provisional claims,
// and marks it exported (capExported then keeps its device's last
// SeriesPerDevice).
func (s *SeriesTables) writeSeries(ctx context.Context, q sqldb.Querier, row *seriesRow, o stats.DetectOptions, now int64) error {
	prov := ""
	if fs := row.state.provisional(o); len(fs) > 0 {
		cs := make([]Change, len(fs))
		for i, f := range fs {
			cs[i] = row.change(f.metric, f.Found)
			cs[i].Provisional = true
		}
		b, err := json.Marshal(cs)
		if err != nil {
			return fmt.Errorf("series %s: %w", escape.Printable(row.key), err)
		}
		prov = string(b)
	}
	_, err := s.db.Exec(ctx, q, `UPDATE series SET server = ?, results = ?, left_out = ?, late = ?, latest_id = ?, latest_started = ?,
		latest_received = ?, rps = ?, p99_us = ?, cpu_per_kreq = ?, exported = 1, updated = ?, provisional = ?, state = ? WHERE key = ?`,
		row.server, row.results, row.leftOut, row.late, row.latestID, row.latestStarted, row.latestReceived,
		sqldb.Null(row.latest[0]), sqldb.Null(row.latest[1]), sqldb.Null(row.latest[2]), now, prov, encodeState(nil, row.state), row.key)
	if err != nil {
		return fmt.Errorf("series %s: %w", escape.Printable(row.key), err)
	}
	return nil
}

// capExported leaves out of /metrics the series of device a past its
// SeriesPerDevice received last, and counts them.
func (s *SeriesTables) capExported(ctx context.Context, q sqldb.Querier, a wire.Addr) error {
	rows, err := s.db.Query(ctx, q, `SELECT key FROM series WHERE fleet = ? AND device = ? AND exported = 1
		ORDER BY latest_received DESC, key DESC LIMIT ? OFFSET ?`, a.Fleet, a.Device, int64(math.MaxInt32), SeriesPerDevice)
	if err != nil {
		return fmt.Errorf("series of %s/%s: %w", a.Fleet, a.Device, err)
	}
	var out []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			rows.Close()
			return fmt.Errorf("series of %s/%s: %w", a.Fleet, a.Device, s.db.Wrap(err))
		}
		out = append(out, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("series of %s/%s: %w", a.Fleet, a.Device, s.db.Wrap(err))
	}
	if len(out) == 0 {
		return nil
	}
	list, _ := json.Marshal(out) // strings: cannot fail
	if _, err := s.db.Exec(ctx, q, "UPDATE series SET exported = 0 WHERE "+s.db.D.InJSON("key"), string(list)); err != nil {
		return fmt.Errorf("series of %s/%s: %w", a.Fleet, a.Device, err)
	}
	if _, err := s.db.Exec(ctx, q, `INSERT INTO series_dropped (fleet, device, n) VALUES (?, ?, ?)
		ON CONFLICT (fleet, device) DO UPDATE SET n = series_dropped.n + excluded.n`, a.Fleet, a.Device, len(out)); err != nil {
		return fmt.Errorf("series of %s/%s: %w", a.Fleet, a.Device, err)
	}
	return nil
}

// change is the Change of the detector's found change f of metric m: the
// results it compared, what was left out among them, throttling on each
// side (Also gets the rest from the payloads: storeChanges).
func (row *seriesRow) change(m int, f stats.Found) Change {
	st := row.state
	split := f.Index - f.Lo
	c := Change{Series: row.key, Fleet: row.fleet, Device: row.device, Spec: row.spec, Labels: row.labels, Metric: seriesMetrics[m],
		Before: f.Delta.Base, After: f.Delta.Other, Pct: f.Delta.Pct, LowPct: f.Delta.LowPct, HighPct: f.Delta.HighPct, P: f.Delta.P,
		BeforeValues: f.Vals[:split], AfterValues: f.Vals[split:], BeforeIDs: []string{}, AfterIDs: []string{}}
	first, last := -1, -1
	var thr [2]int
	for i, ref := range f.Refs {
		j := st.find(ref)
		if j < 0 { // past maxPoints: its id is not kept
			continue
		}
		p := &st.Points[j]
		if first < 0 {
			first = j
		}
		last = j
		side := 0
		if i >= split {
			side = 1
		}
		if p.Thr {
			thr[side]++
		}
		if side == 0 {
			c.BeforeIDs = append(c.BeforeIDs, p.ID)
		} else {
			c.AfterIDs = append(c.AfterIDs, p.ID)
		}
		if i == split {
			c.At, c.ResultID = time.Unix(0, p.Started), p.ID
		}
	}
	for j := first; j >= 0 && j <= last; j++ {
		for why, n := range st.Points[j].Out {
			if c.LeftOut == nil {
				c.LeftOut = map[string]int{}
			}
			c.LeftOut[why] += n
		}
	}
	if thr[0] > 0 || thr[1] > 0 {
		c.Also = append(c.Also, fmt.Sprintf("throttled in %d of %d results before, %d of %d after", thr[0], split, thr[1], len(f.Refs)-split))
	}
	return c
}

// storeChanges stores final changes, once each, with what else changed
// read from the payloads of the results on either side. alertedAt is 0
// for changes the alerts are to raise, else when they count as raised
// (a rebuild's: history, not news).
func (s *SeriesTables) storeChanges(ctx context.Context, q sqldb.Querier, cs []Change, now, alertedAt int64) error {
	for i := range cs {
		c := &cs[i]
		also, err := s.alsoChanged(ctx, q, c)
		if err != nil {
			return err
		}
		c.Also = append(also, c.Also...)
		c.DetectedAt = time.Unix(0, now)
		body, err := json.Marshal(c)
		if err != nil {
			return fmt.Errorf("change of %s: %w", escape.Printable(c.Series), err)
		}
		if _, err := s.db.Exec(ctx, q, `INSERT INTO changes (series, metric, result_id, at, detected_at, body, kind, fleet, device, alerted_at)
			VALUES (?,?,?,?,?,?,'change',?,?,?) ON CONFLICT DO NOTHING`, c.Series, c.Metric, c.ResultID, c.At.UnixNano(), now, string(body),
			c.Fleet, c.Device, alertedAt); err != nil {
			return fmt.Errorf("change of %s: %w", escape.Printable(c.Series), err)
		}
	}
	return nil
}

// alsoChanged compares the fingerprints of the last result before a
// change and the first after it, read from their payloads; a result
// pruned since is said to be.
func (s *SeriesTables) alsoChanged(ctx context.Context, q sqldb.Querier, c *Change) ([]string, error) {
	if len(c.BeforeIDs) == 0 || len(c.AfterIDs) == 0 {
		return nil, nil
	}
	fp := func(id string) (*wire.Fingerprint, error) {
		var raw []byte
		err := s.db.QueryRow(ctx, q, "SELECT raw FROM results WHERE id = ?", id).Scan(&raw)
		if err == sql.ErrNoRows {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("change of %s: %w", escape.Printable(c.Series), s.db.Wrap(err))
		}
		r, err := wire.DecodeResult(raw)
		if err != nil {
			return nil, nil // told as not there
		}
		return &r.Fingerprint, nil
	}
	a, err := fp(c.BeforeIDs[len(c.BeforeIDs)-1])
	if err != nil {
		return nil, err
	}
	b, err := fp(c.AfterIDs[0])
	if err != nil || a == nil || b == nil {
		if err == nil {
			return []string{"the fingerprints on either side: a result is no longer stored"}, nil
		}
		return nil, err
	}
	var out []string
	diff := func(what, x, y string) {
		if x != y {
			out = append(out, fmt.Sprintf("%s %s -> %s", what, escape.Printable(orNone(x)), escape.Printable(orNone(y))))
		}
	}
	diff("kernel", a.Kernel, b.Kernel)
	diff("firmware", extra(a.Extra, "firmware"), extra(b.Extra, "firmware"))
	diff("edgebench", a.AgentVersion, b.AgentVersion)
	diff("server", a.Server, b.Server)
	diff("server binary", short(a.ServerSHA256), short(b.ServerSHA256))
	diff("os", a.OS, b.OS)
	diff("governor", a.Governor, b.Governor)
	diff("max MHz", strconv.Itoa(a.MaxFreqMHz), strconv.Itoa(b.MaxFreqMHz))
	return out, nil
}

func extra(ls []wire.Label, k string) string {
	for _, l := range ls {
		if l.K == k {
			return l.V
		}
	}
	return ""
}

func orNone(s string) string {
	if s == "" || s == "0" {
		return "(none)"
	}
	return s
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
