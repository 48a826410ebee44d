package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/edgebench/edgebench/collector/escape"
	"github.com/edgebench/edgebench/collector/figures"
	"github.com/edgebench/edgebench/collector/group"
	"github.com/edgebench/edgebench/collector/store/sqldb"
	"github.com/edgebench/edgebench/wire"
)

// What the reading commands, the web UI and the API read, and compare
// groups.

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

// busyCmd is a device's busy command as Devices reads it: the command its
// latest heartbeat said it ran, unless that command's terminal event from
// the device is stored. A heartbeat comes every 30 s by default and is
// written every second, so without the event a device stayed "busy" for
// up to 30 s after its run ended, and a heartbeat sent just before the
// end, written after it, made it busy again; the terminal event is the
// end. One lookup on the events' key (command, fleet, device) per busy
// device.
const busyCmd = `CASE WHEN d.busy_cmd = '' OR EXISTS (SELECT 1 FROM events e
	WHERE e.command_id = d.busy_cmd AND e.fleet = d.fleet AND e.device = d.id
	AND e.state IN ('` + string(wire.StateRejected) + `', '` + string(wire.StateSucceeded) + `', '` + string(wire.StateFailed) + `', '` +
	string(wire.StateCancelled) + `', '` + string(wire.StateTimedOut) + `')) THEN '' ELSE d.busy_cmd END`

// Devices lists every device, by fleet and id: for what needs them all
// (a trigger's selection, the alerts' watch); the pages and the API list
// them a page at a time (DevicesAfter). A device's BusyCommand ends with
// its terminal event (busyCmd).
func (s *Store) Devices(ctx context.Context) ([]Device, error) {
	return s.devices(ctx, "ORDER BY d.fleet, d.id")
}

// devices lists the devices that tail (a WHERE, ORDER BY and LIMIT
// clause on devices d, with args) selects.
func (s *Store) devices(ctx context.Context, tail string, args ...any) ([]Device, error) {
	rows, err := s.db.Query(ctx, s.db.R, `SELECT d.fleet, d.id, d.state, d.online, d.boot_id, d.conn_seq, d.info, d.labels, d.heartbeat, `+busyCmd+`,
		d.last_seen, d.last_result, d.last_result_at FROM devices d `+tail, args...)
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
		d.LastSeen = sqldb.UnixTime(seen)
		d.LastResultAt = sqldb.UnixTime(lastAt)
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
	Since            time.Time         // received by the collector since (not the device's time)
	ExcludeThrottled bool
	// ExcludeInvalid leaves out of a comparison the runs whose verdict
	// says their figure does not stand.
	ExcludeInvalid bool
	Limit          int // results (runs, of GroupRuns), the last received first; 0: no limit
	// Before pages: only the results after it in the order of the
	// listing, the last received first (RunsAfter).
	Before Cursor
}

// whereOf builds the SQL condition of f over the results table r.
func whereOf(d sqldb.Dialect, f Filter) (string, []any) {
	conds := []string{"1=1"}
	var args []any
	add := func(c string, a ...any) { conds = append(conds, c); args = append(args, a...) }
	switch {
	case f.Fleet != "" && f.Device != "": // the device's index, not its fleet's
		add(d.NotIndexed("r.fleet")+" = ?", f.Fleet)
	case f.Fleet != "":
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
		add(d.InJSON("r.id"), string(ids))
	}
	keys := make([]string, 0, len(f.Labels))
	for k := range f.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		expr, arg := d.Label(k)
		add(expr+" = ?", arg, f.Labels[k])
	}
	if !f.Since.IsZero() {
		add("r.received >= ?", f.Since.UnixNano())
	}
	if f.ExcludeThrottled {
		add("NOT r.throttled")
	}
	if !f.Before.IsZero() {
		add("(r.received, r.id) < (?, ?)", f.Before.Received, f.Before.ID)
	}
	return strings.Join(conds, " AND "), args
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
	Spec      group.Spec        `json:"spec"`
	URL       string            `json:"url"`
	Conns     int               `json:"connections"`
	Runs      int               `json:"runs"`
	Board     string            `json:"board,omitempty"`
	Server    string            `json:"server,omitempty"`
	Loader    string            `json:"loader,omitempty"` // fleet/id of the device that loaded a run across two devices
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
	// Verdict sums up its runs' verdicts ("server", "NOT VALID:
	// generator"), Stable is --repeat auto's outcome; both set by
	// AddVerdicts, empty for results recorded before them.
	Verdict string `json:"verdict,omitempty"`
	Stable  string `json:"stable,omitempty"`

	cursor Cursor // its place in the listing
}

// Runs lists results matching f, the last received by the collector
// first: a device's clock does not decide what a page shows. The page of
// results is chosen first, on the results alone (an index of received
// serves it), and only its runs are read.
func (s *Store) Runs(ctx context.Context, f Filter) ([]RunRow, error) {
	where, args := whereOf(s.db.D, f)
	page := `SELECT r.id, r.fleet, r.device, r.command_id, r.outcome, r.reason, r.started, r.received, r.labels, r.url,
		r.connections, r.nruns, r.board, r.server, r.loader, r.throttled FROM results r WHERE ` + where + ` ORDER BY r.received DESC, r.id DESC`
	if f.Limit > 0 {
		page += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	q := `SELECT r.id, r.fleet, r.device, r.command_id, r.outcome, r.reason, r.started, r.received, r.labels, coalesce(sp.spec, ''), r.url,
		r.connections, r.nruns, r.board, r.server, r.loader, r.throttled,
		coalesce(avg(u.rps), 0), avg(u.mean_us), avg(u.p50_us), avg(u.p99_us), max(u.max_us),
		CAST(coalesce(sum(u.timeouts), 0) AS BIGINT), CAST(coalesce(sum(u.errors), 0) AS BIGINT), avg(u.cpu_pct), avg(u.io_kbs), avg(u.mem_kb)
		FROM (` + page + `) r LEFT JOIN runs u ON u.result_id = r.id LEFT JOIN result_specs sp ON sp.result_id = r.id
		GROUP BY r.id, r.fleet, r.device, r.command_id, r.outcome, r.reason, r.started, r.received, r.labels, sp.spec, r.url,
		r.connections, r.nruns, r.board, r.server, r.loader, r.throttled ORDER BY r.received DESC, r.id DESC`
	rows, err := s.db.Query(ctx, s.db.R, q, args...)
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
		if err := rows.Scan(&r.ID, &r.Fleet, &r.Device, &r.CommandID, &r.Outcome, &r.Reason, &started, &r.cursor.Received, &labels, &spec, &r.URL,
			&r.Conns, &r.Runs, &r.Board, &r.Server, &r.Loader, &r.Throttled, &r.RPS, &mean, &p50, &p99, &mx, &r.Timeouts, &r.Errors,
			&cpu, &io, &mem); err != nil {
			return nil, fmt.Errorf("runs: %w", err)
		}
		r.Spec = sqldb.ParseSpec(spec, r.URL, r.Conns)
		r.Started = sqldb.UnixTime(started)
		r.cursor.ID = r.ID
		if err := json.Unmarshal([]byte(labels), &r.Labels); err != nil {
			return nil, fmt.Errorf("runs: %s labels: %w", r.ID, err)
		}
		r.MeanUS, r.P50US, r.P99US, r.MaxUS = sqldb.Float(mean), sqldb.Float(p50), sqldb.Float(p99), sqldb.Float(mx)
		r.CPUPct, r.IOKBs, r.MemKB = sqldb.Float(cpu), sqldb.Float(io), sqldb.Float(mem)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("runs: %w", err)
	}
	return out, nil
}

// Result returns a stored result, decoded from the payload it came in,
// or its summary once its samples were pruned (ResultKept says which).
func (s *Store) Result(ctx context.Context, id string) (*wire.Result, error) {
	r, _, err := s.ResultKept(ctx, id)
	return r, err
}

// ResultIDPrefix resolves a unique prefix of a result id (or "last", the
// newest result) to the full id.
func (s *Store) ResultIDPrefix(ctx context.Context, prefix string) (string, error) {
	if !utf8.ValidString(prefix) || strings.ContainsRune(prefix, 0) { // no id holds it
		return "", fmt.Errorf("result %s: %w", prefix, sqldb.ErrNotFound)
	}
	// Ids are ASCII: any that starts with prefix sorts below prefix
	// followed by the highest code point.
	q, arg := "SELECT id FROM results WHERE id >= ? AND id < ? ORDER BY id LIMIT 2", []any{prefix, prefix + "\U0010FFFF"}
	if prefix == "last" {
		q, arg = "SELECT id FROM results ORDER BY received DESC, id DESC LIMIT 1", nil
	}
	rows, err := s.db.Query(ctx, s.db.R, q, arg...)
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
		return "", fmt.Errorf("result %s: %w", prefix, sqldb.ErrNotFound)
	case 1:
		return ids[0], nil
	}
	return "", fmt.Errorf("result %s: %w", prefix, ErrAmbiguous)
}

// CountResults is the number of stored results and runs.
func (s *Store) CountResults(ctx context.Context) (results, runs int64, err error) {
	err = s.db.QueryRow(ctx, s.db.R, "SELECT (SELECT count(*) FROM results), (SELECT count(*) FROM runs)").Scan(&results, &runs)
	if err != nil {
		return 0, 0, fmt.Errorf("count results: %w", s.db.Wrap(err))
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
	// Window is a loader's window event: an edge of its run's measured
	// window, which the collector relays to the target's watch.
	Window *wire.WindowEdge `json:"window,omitempty"`
}

// Events lists a command's events by device and sequence: the events of
// the devices it was sent to (by name, or to their fleet) only. The
// ingest refuses the others; some may have been stored by an older
// collector, and a device's events must not join another fleet's
// command: its status, a firing's missed devices, whom a cancel goes to.
func (s *Store) Events(ctx context.Context, commandID string) ([]Event, error) {
	rows, err := s.db.Query(ctx, s.db.R, `SELECT e.command_id, e.fleet, e.device, e.seq, e.state, e.reason, e.result_id, e.progress, e.at, e.window_edge
		FROM events e WHERE e.command_id = ? AND EXISTS (SELECT 1 FROM command_targets t
			WHERE t.command_id = e.command_id AND t.fleet = e.fleet AND t.target IN (e.device, ?))
		ORDER BY e.fleet, e.device, e.seq`, commandID, wire.AllDevices)
	if err != nil {
		return nil, fmt.Errorf("events %s: %w", commandID, err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		e, err := scanEvent(rows)
		if err != nil {
			return nil, fmt.Errorf("events %s: %w", commandID, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("events %s: %w", commandID, err)
	}
	return out, nil
}

// scanEvent reads an event of the columns command_id, fleet, device,
// seq, state, reason, result_id, progress, at, window_edge.
func scanEvent(rows *sql.Rows) (Event, error) {
	var e Event
	var progress, window string
	var at int64
	if err := rows.Scan(&e.CommandID, &e.Fleet, &e.Device, &e.Seq, &e.State, &e.Reason, &e.ResultID, &progress, &at, &window); err != nil {
		return e, err
	}
	e.Window = windowEdge(window)
	if progress != "" {
		e.Progress = new(wire.Progress)
		if err := json.Unmarshal([]byte(progress), e.Progress); err != nil {
			return e, fmt.Errorf("progress: %w", err)
		}
	}
	e.At = sqldb.UnixTime(at)
	return e, nil
}

// windowEdge reads an event's window edge as AddEvent stores it
// ("start:0"); nil for none.
func windowEdge(s string) *wire.WindowEdge {
	edge, run, ok := strings.Cut(s, ":")
	n, err := strconv.Atoi(run)
	if !ok || err != nil {
		return nil
	}
	return &wire.WindowEdge{Edge: edge, Run: n}
}

// groupColumns are the result columns compare can group by, besides
// labels and the parts of the spec: the device and the fingerprint's
// system-info fields.
var groupColumns = map[string]string{
	"device": "r.fleet || '/' || r.device", "fleet": "r.fleet", "board": "r.board", "cpu_model": "r.cpu_model",
	"cores": "r.cores", "os": "r.os", "kernel": "r.kernel", "arch": "r.arch", "cpu_governor": "r.governor",
	"governor": "r.governor", "agent_version": "r.agent_version", "server": "r.server", "loader": "r.loader",
}

// GroupedRun is one measured window with the group it falls in.
type GroupedRun struct {
	Group    string
	ResultID string
	Spec     group.Spec
	figures.Run

	received int64 // when the collector received its result
	idx      int   // its place among its result's runs
}

// GroupRuns returns the runs matching f with their spec and their group
// under by: a device, a system-info field (board, kernel, os, arch,
// cpu_model, cores, cpu_governor, agent_version, server), a part of the
// spec (url, method, connections, keepalive, rate, body_bytes, mode,
// protocol, tls_resume, tls_version) or else a run label. A run label
// named like a system-info field wins over it where a run has one (board
// set with --label board=pi4 groups by pi4); label.KEY groups by the
// label alone and sys.KEY by the system field or part of the spec alone.
// Runs whose label or field is missing or empty fall in the group "-".
// Only succeeded results count.
func (s *Store) GroupRuns(ctx context.Context, by string, f Filter) ([]GroupedRun, error) {
	where, args := whereOf(s.db.D, f)
	key, kind := group.Resolve(by)
	col := groupColumns[key]
	specPart := ""
	switch kind {
	case group.Label:
		label, arg := s.db.D.Label(key)
		col = "coalesce(" + label + ", '-')"
		args = append([]any{arg}, args...)
	case group.SpecPart:
		col = "''" // from the spec, below
		specPart = key
	case group.System:
		col = "coalesce(nullif(CAST(" + col + " AS TEXT), ''), '-')"
	case group.LabelOrSystem: // a run label board=pi4 wins over the board
		label, arg := s.db.D.Label(key)
		col = "coalesce(" + label + ", nullif(CAST(" + col + " AS TEXT), ''), '-')"
		args = append([]any{arg}, args...)
	}
	q := `SELECT CAST(` + col + ` AS TEXT), r.id, coalesce(sp.spec, ''), r.url, r.connections, u.started, u.duration_s, u.completed, u.rps, u.mean_us, u.p50_us, u.p99_us, u.max_us,
		u.timeouts, u.errors, u.err_connect, u.err_read, u.err_write, u.err_status, u.err_length,
		u.cpu_pct, u.cpu_user_pct, u.io_kbs, u.mem_kb, u.cached_kb, u.temp_c, u.throttled, u.capacity_rps, u.limited_by, u.valid,
		u.stdev_us, u.cpu_idle_pct, u.server_cpu_pct, r.received, u.idx
		FROM results r JOIN runs u ON u.result_id = r.id LEFT JOIN result_specs sp ON sp.result_id = r.id
		WHERE r.outcome = 'succeeded' AND ` + where
	if f.ExcludeThrottled {
		q += " AND NOT u.throttled"
	}
	if f.ExcludeInvalid { // a run without a verdict stays
		q += " AND (u.valid IS NULL OR u.valid)"
	}
	// The newest first, which an index of received serves, as far as
	// f.Limit; the runs are then put back in the order they ran.
	q += " ORDER BY r.received DESC, r.id DESC, u.idx"
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	rows, err := s.db.Query(ctx, s.db.R, q, args...)
	if err != nil {
		return nil, fmt.Errorf("group runs by %s: %w", by, err)
	}
	defer rows.Close()
	var out []GroupedRun
	specs := map[string]group.Spec{} // by its stored text: most runs share a few specs
	for rows.Next() {
		var g GroupedRun
		var started int64
		var spec, url string
		var conns int
		var mean, p50, p99, mx, cpu, user, io, mem, cached, temp, capRPS, stdev, idle, server sql.NullFloat64
		var limitedBy sql.NullString
		var valid sql.NullBool
		e := &g.ErrBy
		if err := rows.Scan(&g.Group, &g.ResultID, &spec, &url, &conns, &started, &g.DurationS, &g.Completed, &g.RPS, &mean, &p50, &p99, &mx,
			&g.Timeouts, &g.Errors, &e.Connect, &e.Read, &e.Write, &e.Status, &e.Length,
			&cpu, &user, &io, &mem, &cached, &temp, &g.Throttled, &capRPS, &limitedBy, &valid,
			&stdev, &idle, &server, &g.received, &g.idx); err != nil {
			return nil, fmt.Errorf("group runs by %s: %w", by, err)
		}
		sk := spec
		if spec == "" {
			sk = "\x00" + url + "\x00" + strconv.Itoa(conns)
		}
		sp, ok := specs[sk]
		if !ok {
			sp = sqldb.ParseSpec(spec, url, conns)
			specs[sk] = sp
		}
		g.Spec = sp
		if v, ok := sp.Field(specPart); ok {
			g.Group = v
		}
		e.Timeout = g.Timeouts
		g.Started = sqldb.UnixTime(started)
		g.MeanUS, g.P50US, g.P99US, g.MaxUS = sqldb.Float(mean), sqldb.Float(p50), sqldb.Float(p99), sqldb.Float(mx)
		g.CPUPct, g.CPUUser, g.IOKBs, g.MemKB, g.CachedKB, g.TempC = sqldb.Float(cpu), sqldb.Float(user), sqldb.Float(io), sqldb.Float(mem), sqldb.Float(cached), sqldb.Float(temp)
		g.CapacityRPS = sqldb.Float(capRPS)
		g.StdevUS, g.CPUIdle, g.ServerCPU = sqldb.Float(stdev), sqldb.Float(idle), sqldb.Float(server)
		g.Invalid, g.GeneratorBound = sqldb.RunVerdict(limitedBy, valid)
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("group runs by %s: %w", by, err)
	}
	// In the order they ran: by the device's start time, then id and
	// repetition (the order the groups and tables appear in).
	slices.SortFunc(out, func(a, b GroupedRun) int {
		return cmp.Or(a.Started.Compare(b.Started), cmp.Compare(a.ResultID, b.ResultID), cmp.Compare(a.idx, b.idx))
	})
	return out, nil
}

// StoredBytesSince is the payload bytes of device a's results the
// collector received since t.
func (s *Store) StoredBytesSince(ctx context.Context, a wire.Addr, t time.Time) (int64, error) {
	var n int64
	err := s.db.QueryRow(ctx, s.db.R, `SELECT CAST(coalesce(sum(coalesce(payload_bytes, length(raw))), 0) AS BIGINT) FROM results WHERE `+s.db.D.NotIndexed("fleet")+` = ? AND device = ? AND received >= ?`,
		a.Fleet, a.Device, t.UnixNano()).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("bytes of %s/%s: %w", a.Fleet, a.Device, s.db.Wrap(err))
	}
	return n, nil
}

// LabelKeys lists the label keys of the succeeded results f selects, of
// the f.Limit last received when it is set.
func (s *Store) LabelKeys(ctx context.Context, f Filter) ([]string, error) {
	where, args := whereOf(s.db.D, f)
	from := "results r"
	where = "r.outcome = 'succeeded' AND " + where
	if f.Limit > 0 {
		from = fmt.Sprintf("(SELECT r.labels FROM results r WHERE %s ORDER BY r.received DESC, r.id DESC LIMIT %d) r", where, f.Limit)
		where = "1=1"
	}
	rows, err := s.db.Query(ctx, s.db.R, `SELECT DISTINCT j.key FROM `+from+`, `+s.db.D.LabelKeys()+` WHERE `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("label keys: %w", err)
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, fmt.Errorf("label keys: %w", err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("label keys: %w", err)
	}
	sort.Strings(keys)
	return keys, nil
}

// CancelTargets are the devices to send a cancel of command id to: those
// whose last event of it is not final (accepted, queued, running) or,
// when no device has answered yet, where the command was sent (each
// device, or a fleet's _all). Only the events of the devices the command
// was sent to count (Events).
func (s *Store) CancelTargets(ctx context.Context, id string) ([]wire.Addr, error) {
	evs, err := s.Events(ctx, id)
	if err != nil {
		return nil, err
	}
	last := map[wire.Addr]wire.EventState{}
	for _, e := range evs { // by device and sequence: the last one wins
		last[wire.Addr{Fleet: e.Fleet, Device: e.Device}] = e.State
	}
	var out []wire.Addr
	for a, st := range last {
		if !st.Terminal() {
			out = append(out, a)
		}
	}
	if len(out) > 0 || len(last) > 0 {
		sort.Slice(out, func(i, j int) bool { return out[i].Fleet+"/"+out[i].Device < out[j].Fleet+"/"+out[j].Device })
		return out, nil
	}
	rows, err := s.db.Query(ctx, s.db.R, `SELECT t.fleet, t.target FROM command_targets t JOIN commands c ON c.id = t.command_id
		WHERE t.command_id = ? AND c.kind = ? ORDER BY t.fleet, t.target`, id, string(wire.KindLoadTest))
	if err != nil {
		return nil, fmt.Errorf("command %s: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var a wire.Addr
		if err := rows.Scan(&a.Fleet, &a.Device); err != nil {
			return nil, fmt.Errorf("command %s: %w", id, err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("command %s: %w", id, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("command %s: %w", escape.Printable(id), sqldb.ErrNotFound)
	}
	return out, nil
}

// Matches reports whether every k=v of sel holds for d (Field).
func (d *Device) Matches(sel map[string]string) bool {
	for k, v := range sel {
		got, ok := d.Field(k)
		if !ok || got != v {
			return false
		}
	}
	return true
}
