package seriesdb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/edgebench/edgebench/collector/escape"
	"github.com/edgebench/edgebench/collector/store/sqldb"
)

// What the pages, the commands, /metrics and the alerts read of the
// series: each read costs what it returns, never the history stored.

// ChangeQuery selects stored changes. Empty fields select everything.
type ChangeQuery struct {
	Fleet, Device string
	Since         time.Time // changes at or after it (the first result after the change started then)
	// Limit is the most changes a page holds; 0: DefaultChangesLimit.
	Limit int
	// Cursor is where the page starts: the Next of the page before, ""
	// for the first (the latest changes).
	Cursor string
}

// DefaultChangesLimit and MaxChangesLimit bound a page of changes.
const (
	DefaultChangesLimit = 100
	MaxChangesLimit     = 1000
)

// ErrBadCursor says a page's cursor was not one a page gave.
var ErrBadCursor = errors.New("cursor: not one a page of changes gave")

// cursorOf is the cursor of the page after a change at (ns) numbered seq.
func cursorOf(at, seq int64) string {
	return strconv.FormatInt(at, 10) + "." + strconv.FormatInt(seq, 10)
}

func parseCursor(c string) (at, seq int64, err error) {
	a, b, ok := strings.Cut(c, ".")
	at, err1 := strconv.ParseInt(a, 10, 64)
	seq, err2 := strconv.ParseInt(b, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("%w: %q", ErrBadCursor, escape.Printable(c))
	}
	return at, seq, nil
}

// ListChanges lists the final changes q selects, the latest first (by
// the time of the first result after each, then as stored), a page at a
// time: next is the Cursor of the next page, "" after the last.
func (s *SeriesTables) ListChanges(ctx context.Context, q ChangeQuery) (cs []Change, next string, err error) {
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultChangesLimit
	}
	limit = min(limit, MaxChangesLimit)
	conds, args := []string{"kind = 'change'"}, []any{}
	if q.Fleet != "" {
		conds, args = append(conds, "fleet = ?"), append(args, q.Fleet)
	}
	if q.Device != "" {
		conds, args = append(conds, "device = ?"), append(args, q.Device)
	}
	if !q.Since.IsZero() {
		conds, args = append(conds, "at >= ?"), append(args, q.Since.UnixNano())
	}
	if q.Cursor != "" {
		at, seq, err := parseCursor(q.Cursor)
		if err != nil {
			return nil, "", err
		}
		// A row value, which both engines read as a range of the
		// index (at, seq): "at < ? OR (at = ? AND seq < ?)" walked it
		// from the latest on PostgreSQL, each page reading those before.
		conds, args = append(conds, "(at, seq) < (?, ?)"), append(args, at, seq)
	}
	rows, err := s.db.Query(ctx, s.db.R, `SELECT seq, at, body FROM changes WHERE `+strings.Join(conds, " AND ")+
		` ORDER BY at DESC, seq DESC LIMIT ?`, append(args, limit+1)...)
	if err != nil {
		return nil, "", fmt.Errorf("changes: %w", err)
	}
	defer rows.Close()
	var last [2]int64
	for rows.Next() {
		var seq, at int64
		var body string
		if err := rows.Scan(&seq, &at, &body); err != nil {
			return nil, "", fmt.Errorf("changes: %w", s.db.Wrap(err))
		}
		if len(cs) == limit {
			next = cursorOf(last[0], last[1])
			break
		}
		var c Change
		if err := json.Unmarshal([]byte(body), &c); err != nil {
			return nil, "", fmt.Errorf("change %d: %w", seq, err)
		}
		c.Seq = seq
		cs = append(cs, c)
		last = [2]int64{at, seq}
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("changes: %w", s.db.Wrap(err))
	}
	return cs, next, nil
}

// MaxProvisional bounds the provisional claims ProvisionalChanges lists.
const MaxProvisional = 500

// ProvisionalChanges lists the provisional claims of the series q selects
// (its Limit and Cursor aside): the latest first, at most MaxProvisional;
// more reports that there were more.
func (s *SeriesTables) ProvisionalChanges(ctx context.Context, q ChangeQuery) (cs []Change, more bool, err error) {
	conds, args := []string{"provisional != ''"}, []any{}
	if q.Fleet != "" {
		conds, args = append(conds, "fleet = ?"), append(args, q.Fleet)
	}
	if q.Device != "" {
		conds, args = append(conds, "device = ?"), append(args, q.Device)
	}
	rows, err := s.db.Query(ctx, s.db.R, `SELECT key, provisional FROM series WHERE `+strings.Join(conds, " AND ")+
		` ORDER BY fleet, device, key LIMIT ?`, append(args, MaxProvisional+1)...)
	if err != nil {
		return nil, false, fmt.Errorf("provisional changes: %w", err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var key, body string
		if err := rows.Scan(&key, &body); err != nil {
			return nil, false, fmt.Errorf("provisional changes: %w", s.db.Wrap(err))
		}
		if n++; n > MaxProvisional {
			more = true
			break
		}
		var these []Change
		if err := json.Unmarshal([]byte(body), &these); err != nil {
			return nil, false, fmt.Errorf("provisional changes of %s: %w", escape.Printable(key), err)
		}
		for _, c := range these {
			if !c.At.Before(q.Since) {
				cs = append(cs, c)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("provisional changes: %w", s.db.Wrap(err))
	}
	sortChanges(cs)
	return cs, more, nil
}

// sortChanges puts the latest first.
func sortChanges(cs []Change) {
	for i := 1; i < len(cs); i++ { // a few: insertion
		for j := i; j > 0 && cs[j].At.After(cs[j-1].At); j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
}

// ChangesToAlert lists, oldest first, at most limit final changes no
// alert was raised for yet (the alert loop's each pass: what was found
// since the one before, whichever collector found it).
func (s *SeriesTables) ChangesToAlert(ctx context.Context, limit int) ([]Change, error) {
	rows, err := s.db.Query(ctx, s.db.R, `SELECT seq, body FROM changes WHERE alerted_at = 0 AND kind = 'change' ORDER BY seq LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("changes to alert: %w", err)
	}
	defer rows.Close()
	var out []Change
	for rows.Next() {
		var c Change
		var body string
		if err := rows.Scan(&c.Seq, &body); err != nil {
			return nil, fmt.Errorf("changes to alert: %w", s.db.Wrap(err))
		}
		seq := c.Seq
		if err := json.Unmarshal([]byte(body), &c); err != nil {
			return nil, fmt.Errorf("change %d: %w", seq, err)
		}
		c.Seq = seq
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("changes to alert: %w", s.db.Wrap(err))
	}
	return out, nil
}

// ClaimChange records that an alert for the stored change seq is raised
// at at, and reports whether this collector is the one to raise it (of
// several on one PostgreSQL, one is).
func (s *SeriesTables) ClaimChange(ctx context.Context, seq int64, at time.Time) (bool, error) {
	res, err := s.db.Exec(ctx, s.db.W, "UPDATE changes SET alerted_at = ? WHERE seq = ? AND alerted_at = 0", at.UnixNano(), seq)
	if err != nil {
		return false, fmt.Errorf("change %d: %w", seq, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("change %d: %w", seq, err)
	}
	return n == 1, nil
}

// LatestSeries is a series' latest figures, as /metrics exports them.
type LatestSeries struct {
	Key           string
	Fleet, Device string
	Server        string // the server label of /metrics (its server label, or the Server header's product)
	Received      time.Time
	RPS, P99US    float64 // NaN: none
	CPUPerKReq    float64
	ResultID      string
	Started       time.Time
}

// Latest lists the latest figures of the series that may be exported
// (SeriesPerDevice per device) whose last result was received since
// since, the last received first, at most limit; total is how many
// series have a result received since since, exported or not.
func (s *SeriesTables) Latest(ctx context.Context, since time.Time, limit int) (ls []LatestSeries, total int64, err error) {
	rows, err := s.db.Query(ctx, s.db.R, `SELECT key, fleet, device, server, latest_received, rps, p99_us, cpu_per_kreq, latest_id, latest_started
		FROM series WHERE exported = 1 AND latest_received >= ? ORDER BY latest_received DESC, key DESC LIMIT ?`, since.UnixNano(), limit)
	if err != nil {
		return nil, 0, fmt.Errorf("latest series: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var l LatestSeries
		var received, started int64
		var v [3]sql.NullFloat64
		if err := rows.Scan(&l.Key, &l.Fleet, &l.Device, &l.Server, &received, &v[0], &v[1], &v[2], &l.ResultID, &started); err != nil {
			return nil, 0, fmt.Errorf("latest series: %w", s.db.Wrap(err))
		}
		l.Received, l.Started = time.Unix(0, received), time.Unix(0, started)
		l.RPS, l.P99US, l.CPUPerKReq = sqldb.Float(v[0]), sqldb.Float(v[1]), sqldb.Float(v[2])
		ls = append(ls, l)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("latest series: %w", s.db.Wrap(err))
	}
	if err := s.db.QueryRow(ctx, s.db.R, "SELECT count(*) FROM series WHERE latest_received >= ?", since.UnixNano()).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("latest series: %w", s.db.Wrap(err))
	}
	return ls, total, nil
}

// DroppedSeries is how many times a device's series were left out of
// /metrics by its cap (SeriesPerDevice).
type DroppedSeries struct {
	Fleet, Device string
	N             int64
}

// SeriesDropped lists the devices whose series the cap left out, at most
// limit of them (those with the most).
func (s *SeriesTables) SeriesDropped(ctx context.Context, limit int) ([]DroppedSeries, error) {
	rows, err := s.db.Query(ctx, s.db.R, "SELECT fleet, device, n FROM series_dropped ORDER BY n DESC, fleet, device LIMIT ?", limit)
	if err != nil {
		return nil, fmt.Errorf("series dropped: %w", err)
	}
	defer rows.Close()
	var out []DroppedSeries
	for rows.Next() {
		var d DroppedSeries
		if err := rows.Scan(&d.Fleet, &d.Device, &d.N); err != nil {
			return nil, fmt.Errorf("series dropped: %w", s.db.Wrap(err))
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("series dropped: %w", s.db.Wrap(err))
	}
	return out, nil
}

// SeriesInfo is what a series' row says of it.
type SeriesInfo struct {
	Key           string
	Fleet, Device string
	Spec          string
	Labels        map[string]string
	// Results counts its succeeded results taken in; LeftOut those of them
	// left out as not valid; Late those left out of the detector as too
	// late (a rebuild takes them in).
	Results, LeftOut, Late int64
	LatestID               string
	Exported               bool
	// Values is how many values the state's detectors hold, per metric,
	// and Points how many results it keeps: bounded whatever the
	// history (Detector).
	Values [3]int
	Points int
}

// Series reads what the series' row of key says of it (sqldb.ErrNotFound when
// there is none).
func (s *SeriesTables) Series(ctx context.Context, key string) (SeriesInfo, error) {
	var in SeriesInfo
	var labels string
	var state []byte
	var exported int
	err := s.db.QueryRow(ctx, s.db.R, `SELECT key, fleet, device, spec, labels, results, left_out, late, latest_id, exported, state
		FROM series WHERE key = ?`, key).Scan(&in.Key, &in.Fleet, &in.Device, &in.Spec, &labels, &in.Results, &in.LeftOut, &in.Late,
		&in.LatestID, &exported, &state)
	if errors.Is(err, sql.ErrNoRows) {
		return in, fmt.Errorf("series %s: %w", escape.Printable(key), sqldb.ErrNotFound)
	}
	if err != nil {
		return in, fmt.Errorf("series %s: %w", escape.Printable(key), s.db.Wrap(err))
	}
	in.Exported = exported == 1
	if err := json.Unmarshal([]byte(labels), &in.Labels); err != nil {
		return in, fmt.Errorf("series %s: %w", escape.Printable(key), err)
	}
	cfg, err := s.seriesConfig(ctx, s.db.R)
	if err != nil {
		return in, err
	}
	st, err := decodeState(state, cfg.opts)
	if err != nil {
		return in, fmt.Errorf("series %s: %w", escape.Printable(key), err)
	}
	for m := range in.Values {
		in.Values[m] = max(st.C[m].Len(), st.S[m].Len())
	}
	in.Points = len(st.Points)
	return in, nil
}
