package collector

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/wire"

	_ "modernc.org/sqlite" // database/sql driver "sqlite", pure Go
)

// Errors of the Store's lookups of one thing by id.
var (
	ErrNotFound  = errors.New("not found")
	ErrAmbiguous = errors.New("prefix is ambiguous")
)

// Store keeps devices, commands, events and results in a SQLite file. It
// writes through one connection (SQLite has one writer anyway; this keeps
// lock waits out of the busy timeout) and reads through a small pool, in
// WAL mode so readers never block the writer.
type Store struct {
	w *sql.DB
	r *sql.DB
}

// migrations are applied in order; PRAGMA user_version counts the applied
// ones. Append, never edit.
var migrations = []string{
	`CREATE TABLE devices (
		fleet TEXT NOT NULL,
		id TEXT NOT NULL,
		state TEXT NOT NULL DEFAULT '',
		boot_id TEXT NOT NULL DEFAULT '',
		conn_seq INTEGER NOT NULL DEFAULT 0,
		online INTEGER NOT NULL DEFAULT 0,
		info TEXT NOT NULL DEFAULT '{}',
		labels TEXT NOT NULL DEFAULT '{}',
		heartbeat TEXT NOT NULL DEFAULT '',
		busy_cmd TEXT NOT NULL DEFAULT '',
		last_seen INTEGER NOT NULL DEFAULT 0,
		last_result TEXT NOT NULL DEFAULT '',
		last_result_at INTEGER NOT NULL DEFAULT 0,
		updated INTEGER NOT NULL DEFAULT 0,
		PRIMARY KEY (fleet, id)
	);
	CREATE TABLE commands (
		id TEXT PRIMARY KEY,
		fleet TEXT NOT NULL,
		target TEXT NOT NULL,
		kind TEXT NOT NULL,
		issued_at INTEGER NOT NULL,
		expires_at INTEGER NOT NULL,
		spec TEXT NOT NULL,
		raw BLOB NOT NULL
	);
	CREATE TABLE events (
		command_id TEXT NOT NULL,
		fleet TEXT NOT NULL,
		device TEXT NOT NULL,
		seq INTEGER NOT NULL,
		state TEXT NOT NULL,
		reason TEXT NOT NULL DEFAULT '',
		result_id TEXT NOT NULL DEFAULT '',
		progress TEXT NOT NULL DEFAULT '',
		at INTEGER NOT NULL,
		received INTEGER NOT NULL,
		PRIMARY KEY (command_id, fleet, device, seq)
	);
	CREATE TABLE results (
		id TEXT PRIMARY KEY,
		fleet TEXT NOT NULL,
		device TEXT NOT NULL,
		command_id TEXT NOT NULL DEFAULT '',
		kind TEXT NOT NULL DEFAULT '',
		outcome TEXT NOT NULL DEFAULT '',
		reason TEXT NOT NULL DEFAULT '',
		created_at INTEGER NOT NULL,
		started INTEGER NOT NULL,
		received INTEGER NOT NULL,
		labels TEXT NOT NULL DEFAULT '{}',
		url TEXT NOT NULL DEFAULT '',
		connections INTEGER NOT NULL DEFAULT 0,
		nruns INTEGER NOT NULL DEFAULT 0,
		board TEXT NOT NULL DEFAULT '',
		cpu_model TEXT NOT NULL DEFAULT '',
		cores INTEGER NOT NULL DEFAULT 0,
		os TEXT NOT NULL DEFAULT '',
		kernel TEXT NOT NULL DEFAULT '',
		arch TEXT NOT NULL DEFAULT '',
		governor TEXT NOT NULL DEFAULT '',
		agent_version TEXT NOT NULL DEFAULT '',
		server TEXT NOT NULL DEFAULT '',
		throttled INTEGER NOT NULL DEFAULT 0,
		raw BLOB NOT NULL
	);
	CREATE INDEX results_device ON results (fleet, device, started);
	CREATE INDEX results_started ON results (started);
	CREATE INDEX results_command ON results (command_id);
	CREATE TABLE runs (
		result_id TEXT NOT NULL REFERENCES results (id),
		idx INTEGER NOT NULL,
		started INTEGER NOT NULL,
		duration_s REAL NOT NULL,
		completed INTEGER NOT NULL,
		rps REAL NOT NULL,
		mean_us REAL,
		p50_us REAL,
		p99_us REAL,
		max_us REAL,
		timeouts INTEGER NOT NULL,
		errors INTEGER NOT NULL,
		err_connect INTEGER NOT NULL,
		err_read INTEGER NOT NULL,
		err_write INTEGER NOT NULL,
		err_status INTEGER NOT NULL,
		err_length INTEGER NOT NULL,
		cpu_pct REAL,
		cpu_user_pct REAL,
		io_kbs REAL,
		mem_kb REAL,
		cached_kb REAL,
		temp_c REAL,
		throttled INTEGER NOT NULL,
		PRIMARY KEY (result_id, idx)
	);`,
	// What each result asked of the server (collector.Spec as JSON):
	// compare keeps runs of different specs apart.
	`CREATE TABLE result_specs (
		result_id TEXT PRIMARY KEY REFERENCES results (id),
		spec TEXT NOT NULL
	) WITHOUT ROWID;`,
}

// OpenStore opens (creating if needed) the SQLite file at path and brings
// its schema up to date. A new file is readable by its owner only, and so
// are its -wal and -shm files (SQLite gives them the database's mode).
func OpenStore(ctx context.Context, path string) (*Store, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	f.Close()
	dsn := func(extra string) string {
		q := url.Values{}
		for _, p := range []string{"busy_timeout(10000)", "journal_mode(wal)", "synchronous(full)", "foreign_keys(1)"} {
			q.Add("_pragma", p)
		}
		if extra != "" {
			q.Add("_pragma", extra)
		}
		q.Set("_txlock", "immediate")
		return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
	}
	w, err := sql.Open("sqlite", dsn(""))
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	s := &Store{w: w}
	if err := s.migrate(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if err := s.backfillSpecs(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	r, err := sql.Open("sqlite", dsn("query_only(1)"))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	r.SetMaxOpenConns(4)
	s.r = r
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error {
	return errors.Join(s.r.Close(), s.w.Close())
}

func (s *Store) migrate(ctx context.Context) error {
	var v int
	if err := s.w.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("schema version: %w", err)
	}
	if v > len(migrations) {
		return fmt.Errorf("schema version %d is newer than this collector's %d", v, len(migrations))
	}
	for i := v; i < len(migrations); i++ {
		tx, err := s.w.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
		// Another process opening the store may have applied it while
		// this one waited for the write lock.
		var now int
		if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&now); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
		if now > i {
			tx.Rollback()
			continue
		}
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", i+1)); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
	}
	return nil
}

// Incoming is a decoded result with the payload it came in, as the store
// keeps both.
type Incoming struct {
	Result *wire.Result
	Raw    []byte
}

// RunFigures are the summary figures of one measured window, the columns
// compare works on. NaN means the figure was not measured.
type RunFigures struct {
	Started   time.Time
	DurationS float64
	Completed int64
	RPS       float64
	MeanUS    float64
	P50US     float64
	P99US     float64
	MaxUS     float64
	Timeouts  int64
	Errors    int64
	ErrBy     wire.ErrorCounts
	CPUPct    float64 // busy: 100 % less idle and iowait
	CPUUser   float64
	IOKBs     float64 // read plus write over the whole disks (partitions left out)
	MemKB     float64 // used
	CachedKB  float64
	TempC     float64 // hottest zone's maximum
	Throttled bool
}

// Figures computes the summary figures of a run. A histogram that does
// not decode leaves the latency figures absent.
func Figures(run *wire.Run, fp wire.Fingerprint) RunFigures {
	nan := math.NaN()
	f := RunFigures{
		Started: run.StartedAt, DurationS: float64(run.DurationUS) / 1e6, Completed: run.Completed,
		MeanUS: nan, P50US: nan, P99US: nan, MaxUS: nan,
		Timeouts: run.Errors.Timeout, ErrBy: run.Errors,
		CPUPct: nan, CPUUser: nan, IOKBs: nan, MemKB: nan, CachedKB: nan, TempC: nan,
		Throttled: fp.Throttled || fp.FreqDropped,
	}
	e := run.Errors
	f.Errors = e.Connect + e.Read + e.Write + e.Timeout + e.Status + e.Length
	if f.DurationS > 0 {
		f.RPS = float64(run.Completed) / f.DurationS
	}
	if len(run.Latency) > 0 {
		if h, err := report.DecodeHistogram(run.Latency); err == nil && h.Count() > 0 {
			f.MeanUS = h.Mean()
			f.P50US = float64(h.Quantile(0.50))
			f.P99US = float64(h.Quantile(0.99))
			f.MaxUS = float64(h.Max())
		}
	}
	if sy := run.System; sy != nil {
		su := sy.Summary
		if c := su.CPU; c != nil {
			f.CPUPct = float64(10000-c.Idle.Mean-c.IOWait.Mean) / 100
			f.CPUUser = float64(c.User.Mean+c.Nice.Mean) / 100
		}
		if len(su.Disks) > 0 {
			f.IOKBs = 0
			for _, d := range su.Disks {
				if int(d.I) < len(sy.Partitions) && sy.Partitions[d.I] {
					continue
				}
				f.IOKBs += float64(d.ReadKBs.Mean + d.WriteKBs.Mean)
			}
		}
		if m := su.Mem; m != nil {
			f.MemKB = float64(m.Used.Mean)
			if m.Cached != nil {
				f.CachedKB = float64(m.Cached.Mean)
			}
		}
		if su.TempMaxDC != nil {
			f.TempC = float64(*su.TempMaxDC) / 10
		}
		if su.Throttled != nil && *su.Throttled != 0 {
			f.Throttled = true
		}
	}
	return f
}

// Ingest stores a batch of results in one transaction and reports, for
// each, whether it was new: a result id already stored is left as it was
// (the device resent it because an ack was lost). When Ingest returns nil
// the batch is durable and may be acknowledged.
func (s *Store) Ingest(ctx context.Context, batch []Incoming) ([]bool, error) {
	fresh := make([]bool, len(batch))
	if len(batch) == 0 {
		return fresh, nil
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("ingest: begin: %w", err)
	}
	defer tx.Rollback()
	insRes, err := tx.PrepareContext(ctx, `INSERT OR IGNORE INTO results
		(id, fleet, device, command_id, kind, outcome, reason, created_at, started, received, labels, url,
		 connections, nruns, board, cpu_model, cores, os, kernel, arch, governor, agent_version, server, throttled, raw)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`)
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	insRun, err := tx.PrepareContext(ctx, `INSERT INTO runs
		(result_id, idx, started, duration_s, completed, rps, mean_us, p50_us, p99_us, max_us, timeouts, errors,
		 err_connect, err_read, err_write, err_status, err_length, cpu_pct, cpu_user_pct, io_kbs, mem_kb, cached_kb, temp_c, throttled)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`)
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	insSpec, err := tx.PrepareContext(ctx, "INSERT INTO result_specs (result_id, spec) VALUES (?, ?)")
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	insDev, err := tx.PrepareContext(ctx, `INSERT INTO devices (fleet, id, last_result, last_result_at, updated)
		VALUES (?,?,?,?,?)
		ON CONFLICT (fleet, id) DO UPDATE SET
			last_result = CASE WHEN excluded.last_result_at >= devices.last_result_at THEN excluded.last_result ELSE devices.last_result END,
			last_result_at = max(devices.last_result_at, excluded.last_result_at)`)
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	now := time.Now().UnixNano()
	for i, in := range batch {
		r := in.Result
		figs := make([]RunFigures, len(r.Runs))
		throttled := r.Fingerprint.Throttled || r.Fingerprint.FreqDropped
		for j := range r.Runs {
			figs[j] = Figures(&r.Runs[j], r.Fingerprint)
			throttled = throttled || figs[j].Throttled
		}
		started := r.CreatedAt
		if len(r.Runs) > 0 && !r.Runs[0].StartedAt.IsZero() {
			started = r.Runs[0].StartedAt
		}
		labels, err := json.Marshal(nonNil(r.Labels))
		if err != nil {
			return nil, fmt.Errorf("ingest %s: labels: %w", r.ID, err)
		}
		fp := r.Fingerprint
		res, err := insRes.ExecContext(ctx, r.ID, r.Fleet, r.Device, r.CommandID, string(r.Kind), string(r.Outcome), r.Reason,
			r.CreatedAt.UnixNano(), started.UnixNano(), now, string(labels), r.Spec.URL, r.Spec.Connections, len(r.Runs),
			fp.Board, fp.CPUModel, fp.Cores, fp.OS, fp.Kernel, fp.Arch, fp.Governor, fp.AgentVersion, fp.Server,
			throttled, in.Raw)
		if err != nil {
			return nil, fmt.Errorf("ingest %s: %w", r.ID, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return nil, fmt.Errorf("ingest %s: %w", r.ID, err)
		}
		if n == 0 {
			continue
		}
		fresh[i] = true
		if _, err := insSpec.ExecContext(ctx, r.ID, SpecOf(r.Spec).key()); err != nil {
			return nil, fmt.Errorf("ingest %s: spec: %w", r.ID, err)
		}
		for j, f := range figs {
			e := f.ErrBy
			if _, err := insRun.ExecContext(ctx, r.ID, j, f.Started.UnixNano(), f.DurationS, f.Completed, f.RPS,
				null(f.MeanUS), null(f.P50US), null(f.P99US), null(f.MaxUS), f.Timeouts, f.Errors,
				e.Connect, e.Read, e.Write, e.Status, e.Length,
				null(f.CPUPct), null(f.CPUUser), null(f.IOKBs), null(f.MemKB), null(f.CachedKB), null(f.TempC), f.Throttled); err != nil {
				return nil, fmt.Errorf("ingest %s run %d: %w", r.ID, j, err)
			}
		}
		if _, err := insDev.ExecContext(ctx, r.Fleet, r.Device, r.ID, started.UnixNano(), now); err != nil {
			return nil, fmt.Errorf("ingest %s: device: %w", r.ID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("ingest: commit: %w", err)
	}
	return fresh, nil
}

// SetStatus records a device's status message. A lost or offline message
// of an older connection of the same boot than the one stored (a stale
// Last Will) is ignored; it reports whether the message was applied.
func (s *Store) SetStatus(ctx context.Context, fleet, device string, st *wire.Status) (bool, error) {
	info := "{}"
	labels := "{}"
	if st.Info != nil {
		b, err := json.Marshal(st.Info)
		if err != nil {
			return false, fmt.Errorf("status %s/%s: %w", fleet, device, err)
		}
		info = string(b)
		lb, err := json.Marshal(nonNil(st.Info.Labels))
		if err != nil {
			return false, fmt.Errorf("status %s/%s: %w", fleet, device, err)
		}
		labels = string(lb)
	}
	online := st.State == wire.StatusOnline
	now := time.Now().UnixNano()
	// A stale message: same boot, older connection, and not a birth.
	res, err := s.w.ExecContext(ctx, `INSERT INTO devices (fleet, id, state, boot_id, conn_seq, online, info, labels, last_seen, updated)
		VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9)
		ON CONFLICT (fleet, id) DO UPDATE SET
			state = excluded.state, boot_id = excluded.boot_id, conn_seq = excluded.conn_seq, online = excluded.online,
			info = CASE WHEN ?10 THEN excluded.info ELSE devices.info END,
			labels = CASE WHEN ?10 THEN excluded.labels ELSE devices.labels END,
			busy_cmd = CASE WHEN excluded.online THEN devices.busy_cmd ELSE '' END,
			last_seen = excluded.last_seen, updated = excluded.updated
		WHERE excluded.online OR devices.boot_id != excluded.boot_id OR devices.conn_seq <= excluded.conn_seq`,
		fleet, device, string(st.State), st.BootID, int64(st.ConnSeq), online, info, labels, now, st.Info != nil)
	if err != nil {
		return false, fmt.Errorf("status %s/%s: %w", fleet, device, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("status %s/%s: %w", fleet, device, err)
	}
	return n > 0, nil
}

// SetHeartbeats records the latest heartbeat of each device in one
// transaction: a fleet's heartbeats cost one commit, not one each.
func (s *Store) SetHeartbeats(ctx context.Context, hbs map[wire.Addr]*wire.Heartbeat) error {
	if len(hbs) == 0 {
		return nil
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("heartbeats: begin: %w", err)
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, `INSERT INTO devices (fleet, id, heartbeat, busy_cmd, last_seen, updated) VALUES (?1, ?2, ?3, ?4, ?5, ?5)
		ON CONFLICT (fleet, id) DO UPDATE SET heartbeat = excluded.heartbeat, busy_cmd = excluded.busy_cmd, last_seen = excluded.last_seen`)
	if err != nil {
		return fmt.Errorf("heartbeats: %w", err)
	}
	defer st.Close()
	now := time.Now().UnixNano()
	for a, hb := range hbs {
		b, err := json.Marshal(hb)
		if err != nil {
			return fmt.Errorf("heartbeat %s/%s: %w", a.Fleet, a.Device, err)
		}
		busy := ""
		if hb.Busy {
			busy = hb.CommandID
		}
		if _, err := st.ExecContext(ctx, a.Fleet, a.Device, string(b), busy, now); err != nil {
			return fmt.Errorf("heartbeat %s/%s: %w", a.Fleet, a.Device, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("heartbeats: commit: %w", err)
	}
	return nil
}

// AddCommand records a command the collector sent; target is the device
// id or "_all".
func (s *Store) AddCommand(ctx context.Context, fleet, target string, c *wire.Command, raw []byte) error {
	spec, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("command %s: %w", c.ID, err)
	}
	_, err = s.w.ExecContext(ctx, `INSERT OR IGNORE INTO commands (id, fleet, target, kind, issued_at, expires_at, spec, raw)
		VALUES (?,?,?,?,?,?,?,?)`, c.ID, fleet, target, string(c.Kind), c.IssuedAt.UnixNano(), c.ExpiresAt.UnixNano(), string(spec), raw)
	if err != nil {
		return fmt.Errorf("command %s: %w", c.ID, err)
	}
	return nil
}

// AddEvent records a command event; a repeated one (same command, device
// and sequence number) is stored once.
func (s *Store) AddEvent(ctx context.Context, fleet, device string, ev *wire.Event) error {
	progress := ""
	if ev.Progress != nil {
		b, err := json.Marshal(ev.Progress)
		if err != nil {
			return fmt.Errorf("event %s/%s %s: %w", fleet, device, ev.CommandID, err)
		}
		progress = string(b)
	}
	_, err := s.w.ExecContext(ctx, `INSERT OR IGNORE INTO events (command_id, fleet, device, seq, state, reason, result_id, progress, at, received)
		VALUES (?,?,?,?,?,?,?,?,?,?)`, ev.CommandID, fleet, device, ev.Seq, string(ev.State), ev.Reason, ev.ResultID, progress,
		ev.At.UnixNano(), time.Now().UnixNano())
	if err != nil {
		return fmt.Errorf("event %s/%s %s: %w", fleet, device, ev.CommandID, err)
	}
	return nil
}

// Device is what the store knows of one device.
type Device struct {
	Fleet        string            `json:"fleet"`
	ID           string            `json:"id"`
	State        string            `json:"state"`
	Online       bool              `json:"online"`
	BootID       string            `json:"boot_id,omitempty"`
	ConnSeq      uint64            `json:"conn_seq"`
	Info         *wire.DeviceInfo  `json:"info,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
	Heartbeat    *wire.Heartbeat   `json:"heartbeat,omitempty"`
	BusyCommand  string            `json:"busy_cmd,omitempty"`
	LastSeen     time.Time         `json:"last_seen"`
	LastResult   string            `json:"last_result,omitempty"`
	LastResultAt time.Time         `json:"last_result_at,omitzero"`
}

// Field is the value of a system-info field or label of the device, for
// --select: labels first, then info fields by their JSON names.
func (d *Device) Field(k string) (string, bool) {
	if v, ok := d.Labels[k]; ok {
		return v, true
	}
	switch k {
	case "device", "id":
		return d.ID, true
	case "fleet":
		return d.Fleet, true
	case "state":
		return d.State, true
	}
	if d.Info == nil {
		return "", false
	}
	b, err := json.Marshal(d.Info)
	if err != nil {
		return "", false
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return "", false
	}
	v, ok := m[k]
	if !ok {
		return "", false
	}
	return fmt.Sprint(v), true
}

// Devices lists the devices, by fleet and id.
func (s *Store) Devices(ctx context.Context) ([]Device, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT fleet, id, state, online, boot_id, conn_seq, info, labels, heartbeat, busy_cmd,
		last_seen, last_result, last_result_at FROM devices ORDER BY fleet, id`)
	if err != nil {
		return nil, fmt.Errorf("devices: %w", err)
	}
	defer rows.Close()
	var out []Device
	for rows.Next() {
		var d Device
		var info, labels, hb string
		var seen, lastAt, seq int64
		if err := rows.Scan(&d.Fleet, &d.ID, &d.State, &d.Online, &d.BootID, &seq, &info, &labels, &hb, &d.BusyCommand,
			&seen, &d.LastResult, &lastAt); err != nil {
			return nil, fmt.Errorf("devices: %w", err)
		}
		d.ConnSeq = uint64(seq)
		if info != "{}" && info != "" {
			d.Info = new(wire.DeviceInfo)
			if err := json.Unmarshal([]byte(info), d.Info); err != nil {
				return nil, fmt.Errorf("devices: %s/%s info: %w", d.Fleet, d.ID, err)
			}
		}
		if err := json.Unmarshal([]byte(labels), &d.Labels); err != nil {
			return nil, fmt.Errorf("devices: %s/%s labels: %w", d.Fleet, d.ID, err)
		}
		if hb != "" {
			d.Heartbeat = new(wire.Heartbeat)
			if err := json.Unmarshal([]byte(hb), d.Heartbeat); err != nil {
				return nil, fmt.Errorf("devices: %s/%s heartbeat: %w", d.Fleet, d.ID, err)
			}
		}
		d.LastSeen = unixTime(seen)
		d.LastResultAt = unixTime(lastAt)
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("devices: %w", err)
	}
	return out, nil
}

// Filter selects runs. Empty fields select everything.
type Filter struct {
	Fleet            string
	Device           string
	Command          string
	IDs              []string          // only these results; nil: any, empty: none
	Labels           map[string]string // every one must match
	Since            time.Time
	ExcludeThrottled bool
	Limit            int // results, newest first; 0: no limit
}

// where builds the SQL condition of f over the results table r.
func (f Filter) where() (string, []any) {
	conds := []string{"1=1"}
	var args []any
	add := func(c string, a ...any) { conds = append(conds, c); args = append(args, a...) }
	if f.Fleet != "" {
		add("r.fleet = ?", f.Fleet)
	}
	if f.Device != "" {
		add("r.device = ?", f.Device)
	}
	if f.Command != "" {
		add("r.command_id = ?", f.Command)
	}
	if f.IDs != nil {
		ids, _ := json.Marshal(f.IDs) // strings: cannot fail
		add("r.id IN (SELECT value FROM json_each(?))", string(ids))
	}
	keys := make([]string, 0, len(f.Labels))
	for k := range f.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		add("json_extract(r.labels, ?) = ?", jsonPath(k), f.Labels[k])
	}
	if !f.Since.IsZero() {
		add("r.started >= ?", f.Since.UnixNano())
	}
	if f.ExcludeThrottled {
		add("r.throttled = 0")
	}
	return strings.Join(conds, " AND "), args
}

// jsonPath quotes a key for json_extract.
func jsonPath(k string) string {
	return `$."` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(k) + `"`
}

// RunRow is one stored result with its figures averaged over its runs.
type RunRow struct {
	ID        string            `json:"id"`
	Fleet     string            `json:"fleet"`
	Device    string            `json:"device"`
	CommandID string            `json:"cmd_id,omitempty"`
	Outcome   string            `json:"outcome"`
	Reason    string            `json:"reason,omitempty"` // why it did not succeed
	Started   time.Time         `json:"started"`
	Labels    map[string]string `json:"labels,omitempty"`
	Spec      Spec              `json:"spec"`
	URL       string            `json:"url"`
	Conns     int               `json:"connections"`
	Runs      int               `json:"runs"`
	Board     string            `json:"board,omitempty"`
	Server    string            `json:"server,omitempty"`
	Throttled bool              `json:"throttled"`
	RPS       float64           `json:"rps"`
	MeanUS    float64           `json:"mean_us"`
	P50US     float64           `json:"p50_us"`
	P99US     float64           `json:"p99_us"`
	MaxUS     float64           `json:"max_us"`
	Timeouts  int64             `json:"timeouts"`
	Errors    int64             `json:"errors"`
	CPUPct    float64           `json:"cpu_pct"`
	IOKBs     float64           `json:"io_kbs"`
	MemKB     float64           `json:"mem_kb"`
}

// Runs lists results matching f, newest first.
func (s *Store) Runs(ctx context.Context, f Filter) ([]RunRow, error) {
	where, args := f.where()
	q := `SELECT r.id, r.fleet, r.device, r.command_id, r.outcome, r.reason, r.started, r.labels, coalesce(sp.spec, ''), r.url,
		r.connections, r.nruns, r.board, r.server, r.throttled,
		coalesce(avg(u.rps), 0), avg(u.mean_us), avg(u.p50_us), avg(u.p99_us), max(u.max_us),
		coalesce(sum(u.timeouts), 0), coalesce(sum(u.errors), 0), avg(u.cpu_pct), avg(u.io_kbs), avg(u.mem_kb)
		FROM results r LEFT JOIN runs u ON u.result_id = r.id LEFT JOIN result_specs sp ON sp.result_id = r.id
		WHERE ` + where + ` GROUP BY r.id ORDER BY r.started DESC, r.id DESC`
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("runs: %w", err)
	}
	defer rows.Close()
	var out []RunRow
	for rows.Next() {
		var r RunRow
		var started int64
		var labels, spec string
		var mean, p50, p99, mx, cpu, io, mem sql.NullFloat64
		if err := rows.Scan(&r.ID, &r.Fleet, &r.Device, &r.CommandID, &r.Outcome, &r.Reason, &started, &labels, &spec, &r.URL,
			&r.Conns, &r.Runs, &r.Board, &r.Server, &r.Throttled, &r.RPS, &mean, &p50, &p99, &mx, &r.Timeouts, &r.Errors,
			&cpu, &io, &mem); err != nil {
			return nil, fmt.Errorf("runs: %w", err)
		}
		r.Spec = parseSpec(spec, r.URL, r.Conns)
		r.Started = unixTime(started)
		if err := json.Unmarshal([]byte(labels), &r.Labels); err != nil {
			return nil, fmt.Errorf("runs: %s labels: %w", r.ID, err)
		}
		r.MeanUS, r.P50US, r.P99US, r.MaxUS = nf(mean), nf(p50), nf(p99), nf(mx)
		r.CPUPct, r.IOKBs, r.MemKB = nf(cpu), nf(io), nf(mem)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("runs: %w", err)
	}
	return out, nil
}

// Result returns a stored result, decoded from the payload it came in.
func (s *Store) Result(ctx context.Context, id string) (*wire.Result, error) {
	var raw []byte
	err := s.r.QueryRowContext(ctx, "SELECT raw FROM results WHERE id = ?", id).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("result %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("result %s: %w", id, err)
	}
	r, err := wire.DecodeResult(raw)
	if err != nil {
		return nil, fmt.Errorf("result %s: stored payload: %w", id, err)
	}
	return r, nil
}

// ResultIDPrefix resolves a unique prefix of a result id (or "last", the
// newest result) to the full id.
func (s *Store) ResultIDPrefix(ctx context.Context, prefix string) (string, error) {
	q, arg := "SELECT id FROM results WHERE id >= ? AND id < ? ORDER BY id LIMIT 2", []any{prefix, prefix + "\xff"}
	if prefix == "last" {
		q, arg = "SELECT id FROM results ORDER BY started DESC, id DESC LIMIT 1", nil
	}
	rows, err := s.r.QueryContext(ctx, q, arg...)
	if err != nil {
		return "", fmt.Errorf("result %s: %w", prefix, err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return "", fmt.Errorf("result %s: %w", prefix, err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("result %s: %w", prefix, err)
	}
	switch len(ids) {
	case 0:
		return "", fmt.Errorf("result %s: %w", prefix, ErrNotFound)
	case 1:
		return ids[0], nil
	}
	return "", fmt.Errorf("result %s: %w", prefix, ErrAmbiguous)
}

// CountResults is the number of stored results and runs.
func (s *Store) CountResults(ctx context.Context) (results, runs int64, err error) {
	err = s.r.QueryRowContext(ctx, "SELECT (SELECT count(*) FROM results), (SELECT count(*) FROM runs)").Scan(&results, &runs)
	if err != nil {
		return 0, 0, fmt.Errorf("count results: %w", err)
	}
	return results, runs, nil
}

// Event is a stored command event.
type Event struct {
	CommandID string          `json:"cmd_id"`
	Fleet     string          `json:"fleet"`
	Device    string          `json:"device"`
	Seq       uint32          `json:"seq"`
	State     wire.EventState `json:"state"`
	Reason    string          `json:"reason,omitempty"`
	ResultID  string          `json:"result_id,omitempty"`
	Progress  *wire.Progress  `json:"progress,omitempty"`
	At        time.Time       `json:"at"`
}

// Events lists a command's events by device and sequence.
func (s *Store) Events(ctx context.Context, commandID string) ([]Event, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT command_id, fleet, device, seq, state, reason, result_id, progress, at
		FROM events WHERE command_id = ? ORDER BY fleet, device, seq`, commandID)
	if err != nil {
		return nil, fmt.Errorf("events %s: %w", commandID, err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var e Event
		var progress string
		var at int64
		if err := rows.Scan(&e.CommandID, &e.Fleet, &e.Device, &e.Seq, &e.State, &e.Reason, &e.ResultID, &progress, &at); err != nil {
			return nil, fmt.Errorf("events %s: %w", commandID, err)
		}
		if progress != "" {
			e.Progress = new(wire.Progress)
			if err := json.Unmarshal([]byte(progress), e.Progress); err != nil {
				return nil, fmt.Errorf("events %s: progress: %w", commandID, err)
			}
		}
		e.At = unixTime(at)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("events %s: %w", commandID, err)
	}
	return out, nil
}

// groupColumns are the result columns compare can group by, besides
// labels and the parts of the spec: the device and the fingerprint's
// system-info fields.
var groupColumns = map[string]string{
	"device": "r.fleet || '/' || r.device", "fleet": "r.fleet", "board": "r.board", "cpu_model": "r.cpu_model",
	"cores": "r.cores", "os": "r.os", "kernel": "r.kernel", "arch": "r.arch", "cpu_governor": "r.governor",
	"governor": "r.governor", "agent_version": "r.agent_version", "server": "r.server",
}

// GroupedRun is one measured window with the group it falls in.
type GroupedRun struct {
	Group    string
	ResultID string
	Spec     Spec
	RunFigures
}

// GroupRuns returns the runs matching f with their spec and their group
// under by: a device, a system-info field (board, kernel, os, arch,
// cpu_model, cores, cpu_governor, agent_version, server), a part of the
// spec (url, method, connections, keepalive, rate, body_bytes) or else a
// run label. Runs whose label is missing fall in the group "-". Only
// succeeded results count.
func (s *Store) GroupRuns(ctx context.Context, by string, f Filter) ([]GroupedRun, error) {
	where, args := f.where()
	col, ok := groupColumns[by]
	switch {
	case by == "server": // a run label server=nginx wins over the Server header
		col = "coalesce(json_extract(r.labels, ?), nullif(r.server, ''), '-')"
		args = append([]any{jsonPath(by)}, args...)
	case isSpecField(by):
		col = "''" // from the spec, below
	case !ok:
		col = "coalesce(json_extract(r.labels, ?), '-')"
		args = append([]any{jsonPath(by)}, args...)
	}
	q := `SELECT CAST(` + col + ` AS TEXT), r.id, coalesce(sp.spec, ''), r.url, r.connections, u.started, u.duration_s, u.completed, u.rps, u.mean_us, u.p50_us, u.p99_us, u.max_us,
		u.timeouts, u.errors, u.err_connect, u.err_read, u.err_write, u.err_status, u.err_length,
		u.cpu_pct, u.cpu_user_pct, u.io_kbs, u.mem_kb, u.cached_kb, u.temp_c, u.throttled
		FROM results r JOIN runs u ON u.result_id = r.id LEFT JOIN result_specs sp ON sp.result_id = r.id
		WHERE r.outcome = 'succeeded' AND ` + where
	if f.ExcludeThrottled {
		q += " AND u.throttled = 0"
	}
	q += " ORDER BY r.started, r.id, u.idx"
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("group runs by %s: %w", by, err)
	}
	defer rows.Close()
	var out []GroupedRun
	specs := map[string]Spec{} // a result's runs share its spec
	for rows.Next() {
		var g GroupedRun
		var started int64
		var spec, url string
		var conns int
		var mean, p50, p99, mx, cpu, user, io, mem, cached, temp sql.NullFloat64
		e := &g.ErrBy
		if err := rows.Scan(&g.Group, &g.ResultID, &spec, &url, &conns, &started, &g.DurationS, &g.Completed, &g.RPS, &mean, &p50, &p99, &mx,
			&g.Timeouts, &g.Errors, &e.Connect, &e.Read, &e.Write, &e.Status, &e.Length,
			&cpu, &user, &io, &mem, &cached, &temp, &g.Throttled); err != nil {
			return nil, fmt.Errorf("group runs by %s: %w", by, err)
		}
		sp, ok := specs[g.ResultID]
		if !ok {
			sp = parseSpec(spec, url, conns)
			specs[g.ResultID] = sp
		}
		g.Spec = sp
		if v, ok := sp.field(by); ok {
			g.Group = v
		}
		e.Timeout = g.Timeouts
		g.Started = unixTime(started)
		g.MeanUS, g.P50US, g.P99US, g.MaxUS = nf(mean), nf(p50), nf(p99), nf(mx)
		g.CPUPct, g.CPUUser, g.IOKBs, g.MemKB, g.CachedKB, g.TempC = nf(cpu), nf(user), nf(io), nf(mem), nf(cached), nf(temp)
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("group runs by %s: %w", by, err)
	}
	return out, nil
}

func null(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}

func nf(v sql.NullFloat64) float64 {
	if !v.Valid {
		return math.NaN()
	}
	return v.Float64
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func unixTime(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}
