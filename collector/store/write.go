package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/edgebench/edgebench/collector/figures"
	"github.com/edgebench/edgebench/collector/group"
	"github.com/edgebench/edgebench/collector/store/retention"
	"github.com/edgebench/edgebench/collector/store/seriesdb"
	"github.com/edgebench/edgebench/collector/store/sqldb"
	"github.com/edgebench/edgebench/collector/summary"
	"github.com/edgebench/edgebench/wire"
)

// What the collector writes. Every write is idempotent: a result, command
// or event stored twice is stored once, and a device's status or
// heartbeat is replaced only by a newer one, whatever the order in which
// messages arrive and whichever of several collectors sharing a store
// writes them. Each transaction takes its row locks in key order, so that
// two collectors' transactions do not deadlock.

// Incoming is a decoded result with the payload it came in, as the store
// keeps both.
type Incoming struct {
	Result *wire.Result
	Raw    []byte
	// Received is when the collector received it (zero: when Ingest
	// stores it). Lists, pages and retention go by it, not by the
	// device's clock, which says what it likes.
	Received time.Time

	figs    []figures.Run // the figures of Result's runs, when computed ahead (Prepare)
	summary []byte        // Result without its samples (summary.Of), when computed ahead
	split   bool          // summary is computed (nil: no samples to keep apart)
}

// Prepare computes the figures of the result's runs ahead of Ingest: the
// collector does it in each result's handler, in parallel, rather than in
// its one batcher, where decoding a latency histogram per run took a third
// of the ingest's time. A result whose figures panic is left to Ingest,
// which isolates it.
func (in *Incoming) Prepare() {
	defer func() {
		if recover() != nil {
			in.figs, in.summary, in.split = nil, nil, false
		}
	}()
	in.figs = runFigures(in.Result)
	if sum, err := summary.Of(in.Raw); err == nil {
		in.summary, in.split = sum, true
	}
}

// runFigures are the figures of each of r's runs.
func runFigures(r *wire.Result) []figures.Run {
	figs := make([]figures.Run, len(r.Runs))
	for j := range r.Runs {
		figs[j] = figures.Of(&r.Runs[j], r.Fingerprint)
	}
	if c := r.Capacity; c != nil && len(figs) > 0 {
		figs[0].CapacityRPS = c.CapacityRPS
	}
	return figs
}

// Ingest stores a batch of results in one transaction and reports, for
// each, whether it was new: a result id already stored is left as it was
// (the device resent it because an ack was lost, or another collector
// took it). When Ingest returns nil the batch is durable and may be
// acknowledged.
func (s *Store) Ingest(ctx context.Context, batch []Incoming) ([]bool, error) {
	st, err := s.IngestStates(ctx, batch)
	if err != nil {
		return nil, err
	}
	fresh := make([]bool, len(batch))
	for i, v := range st {
		fresh[i] = v == IngestNew
	}
	return fresh, nil
}

// IngestState is what Store.IngestStates did with one result of a batch.
type IngestState int

const (
	IngestDuplicate IngestState = iota // its id was stored already, by its own device
	IngestNew                          // stored
	IngestTaken                        // its id is another device's result: not stored, to be refused
)

// IngestStates is Ingest, telling a result stored before by its own device (a
// resend) from one whose id another device's result has.
func (s *Store) IngestStates(ctx context.Context, batch []Incoming) ([]IngestState, error) {
	if len(batch) == 0 {
		return make([]IngestState, 0), nil
	}
	tx, err := s.db.W.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("ingest: begin: %w", s.db.Wrap(err))
	}
	defer tx.Rollback()
	fresh, err := s.ingestTx(ctx, tx, batch)
	if err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("ingest: commit: %w", s.db.Wrap(err))
	}
	return fresh, nil
}

// ingestTx is IngestStates within the transaction tx, which the caller
// commits.
func (s *Store) ingestTx(ctx context.Context, tx *sql.Tx, batch []Incoming) ([]IngestState, error) {
	fresh := make([]IngestState, len(batch))
	// The first of each id, in id order.
	first := make(map[string]int, len(batch))
	order := make([]int, 0, len(batch))
	for i, in := range batch {
		if _, dup := first[in.Result.ID]; !dup {
			first[in.Result.ID] = i
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(batch[a].Result.ID, batch[b].Result.ID) })

	now := time.Now().UnixNano()
	type prepared struct {
		started  time.Time
		figs     []figures.Run
		received int64
		samples  []byte // the payload as it came, kept apart from its summary; nil: none
	}
	prep := make(map[string]prepared, len(order))
	results := make([][]any, 0, len(order))
	var days []int64 // of the samples kept apart: PostgreSQL's tables of result_samples
	for _, i := range order {
		in := batch[i]
		r := in.Result
		figs := in.figs
		if len(figs) != len(r.Runs) {
			figs = runFigures(r)
		}
		throttled := r.Fingerprint.Throttled || r.Fingerprint.FreqDropped
		for _, f := range figs {
			throttled = throttled || f.Throttled
		}
		started := r.CreatedAt
		if len(r.Runs) > 0 && !r.Runs[0].StartedAt.IsZero() {
			started = r.Runs[0].StartedAt
		}
		received := now
		if !in.Received.IsZero() {
			received = in.Received.UnixNano()
		}
		raw, isSummary, samples := in.Raw, any(nil), []byte(nil)
		if !in.split {
			if sum, err := summary.Of(in.Raw); err == nil {
				in.summary, in.split = sum, true
			}
		}
		if in.split && in.summary != nil {
			raw, isSummary, samples = in.summary, true, in.Raw
			days = append(days, retention.Day(received))
		}
		prep[r.ID] = prepared{started, figs, received, samples}
		labels, err := s.db.D.LabelsJSON(r.Labels)
		if err != nil {
			return nil, fmt.Errorf("ingest %s: labels: %w", r.ID, err)
		}
		fp := r.Fingerprint
		stable, rsd, nrep, on := repeatColumns(r.Repeat)
		results = append(results, []any{r.ID, r.Fleet, r.Device, r.CommandID, string(r.Kind), string(r.Outcome), r.Reason,
			r.CreatedAt.UnixNano(), started.UnixNano(), received, labels, r.Spec.URL, r.Spec.Connections, len(r.Runs),
			fp.Board, fp.CPUModel, fp.Cores, fp.OS, fp.Kernel, fp.Arch, fp.Governor, fp.AgentVersion, fp.Server,
			throttled, raw, stable, rsd, nrep, on, len(in.Raw), isSummary, loaderOf(r)})
	}
	if err := s.EnsureDays(ctx, days); err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}

	inserted := make(map[string]bool, len(order))
	err := s.db.InsertRows(ctx, tx, `INSERT INTO results
		(id, fleet, device, command_id, kind, outcome, reason, created_at, started, received, labels, url,
		 connections, nruns, board, cpu_model, cores, os, kernel, arch, governor, agent_version, server, throttled, raw,
		 stable, stable_rsd_pct, stable_runs, stable_on, payload_bytes, summary, loader)
		VALUES `, 32, results, " ON CONFLICT (id) DO NOTHING RETURNING id", func(rs *sql.Rows) error {
		var id string
		if err := rs.Scan(&id); err != nil {
			return err
		}
		inserted[id] = true
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("ingest: results: %w", err)
	}
	// Whose each id is: the result inserted now, or the one stored before
	// (a resend by its own device, or another device's result).
	owner := make(map[string]wire.Addr, len(order))
	for id := range inserted {
		r := batch[first[id]].Result
		owner[id] = wire.Addr{Fleet: r.Fleet, Device: r.Device}
	}
	if len(inserted) < len(order) {
		var ids []string
		for _, i := range order {
			if id := batch[i].Result.ID; !inserted[id] {
				ids = append(ids, id)
			}
		}
		list, _ := json.Marshal(ids) // strings: cannot fail
		rs, err := s.db.Query(ctx, tx, "SELECT id, fleet, device FROM results WHERE "+s.db.D.InJSON("id"), string(list))
		if err != nil {
			return nil, fmt.Errorf("ingest: owners: %w", err)
		}
		for rs.Next() {
			var id string
			var a wire.Addr
			if err := rs.Scan(&id, &a.Fleet, &a.Device); err != nil {
				rs.Close()
				return nil, fmt.Errorf("ingest: owners: %w", s.db.Wrap(err))
			}
			owner[id] = a
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return nil, fmt.Errorf("ingest: owners: %w", s.db.Wrap(err))
		}
	}
	for i, in := range batch {
		r := in.Result
		if a, ok := owner[r.ID]; ok && (a.Fleet != r.Fleet || a.Device != r.Device) {
			fresh[i] = IngestTaken
		}
	}
	if len(inserted) > 0 {
		var specs, runs, samples [][]any
		type last struct {
			id string
			at int64
		}
		devs := map[wire.Addr]last{}
		for _, i := range order {
			r := batch[i].Result
			if !inserted[r.ID] {
				continue
			}
			fresh[i] = IngestNew
			p := prep[r.ID]
			specs = append(specs, []any{r.ID, group.ResultSpec(r).Key()})
			if p.samples != nil {
				samples = append(samples, []any{r.ID, p.received, p.samples})
			}
			for j, f := range p.figs {
				e := f.ErrBy
				limitedBy, valid := verdictColumns(r.Runs[j].Verdict)
				runs = append(runs, []any{r.ID, j, f.Started.UnixNano(), f.DurationS, f.Completed, f.RPS,
					sqldb.Null(f.MeanUS), sqldb.Null(f.P50US), sqldb.Null(f.P99US), sqldb.Null(f.MaxUS), f.Timeouts, f.Errors,
					e.Connect, e.Read, e.Write, e.Status, e.Length,
					sqldb.Null(f.CPUPct), sqldb.Null(f.CPUUser), sqldb.Null(f.IOKBs), sqldb.Null(f.MemKB), sqldb.Null(f.CachedKB), sqldb.Null(f.TempC), f.Throttled,
					sqldb.Null(f.CapacityRPS), limitedBy, valid, sqldb.Null(f.StdevUS), sqldb.Null(f.CPUIdle), sqldb.Null(f.ServerCPU)})
			}
			// A device's last result: the latest received (not by the
			// device's clock), the later id of two received at once.
			a := wire.Addr{Fleet: r.Fleet, Device: r.Device}
			at := p.received
			if l, ok := devs[a]; !ok || at > l.at || at == l.at && r.ID > l.id {
				devs[a] = last{r.ID, at}
			}
		}
		if err := s.db.InsertRows(ctx, tx, "INSERT INTO result_specs (result_id, spec) VALUES ", 2, specs, "", nil); err != nil {
			return nil, fmt.Errorf("ingest: specs: %w", err)
		}
		if err := s.db.InsertRows(ctx, tx, `INSERT INTO runs
			(result_id, idx, started, duration_s, completed, rps, mean_us, p50_us, p99_us, max_us, timeouts, errors,
			 err_connect, err_read, err_write, err_status, err_length, cpu_pct, cpu_user_pct, io_kbs, mem_kb, cached_kb, temp_c, throttled,
			 capacity_rps, limited_by, valid, stdev_us, cpu_idle_pct, server_cpu_pct)
			VALUES `, 30, runs, "", nil); err != nil {
			return nil, fmt.Errorf("ingest: runs: %w", err)
		}
		if err := s.db.InsertRows(ctx, tx, "INSERT INTO result_samples (result_id, received, raw) VALUES ", 3, samples, "", nil); err != nil {
			return nil, fmt.Errorf("ingest: samples: %w", err)
		}
		var devRows [][]any
		for _, a := range sqldb.SortedAddrs(devs) {
			devRows = append(devRows, []any{a.Fleet, a.Device, devs[a].id, devs[a].at, now})
		}
		if err := s.db.InsertRows(ctx, tx, "INSERT INTO devices (fleet, id, last_result, last_result_at, updated) VALUES ", 5, devRows,
			` ON CONFLICT (fleet, id) DO UPDATE SET
				last_result = CASE WHEN excluded.last_result_at >= devices.last_result_at THEN excluded.last_result ELSE devices.last_result END,
				last_result_at = `+s.db.D.Greatest()+`(devices.last_result_at, excluded.last_result_at)`, nil); err != nil {
			return nil, fmt.Errorf("ingest: devices: %w", err)
		}
		// The series' state, once the devices' rows are locked (series.go).
		ins := make([]seriesdb.In, 0, len(inserted))
		for _, i := range order {
			if r := batch[i].Result; inserted[r.ID] {
				p := prep[r.ID]
				ins = append(ins, seriesdb.In{R: r, Figs: p.figs, Started: p.started.UnixNano(), Received: p.received})
			}
		}
		if err := s.IngestSeries(ctx, tx, ins, now); err != nil {
			return nil, fmt.Errorf("ingest: %w", err)
		}
	}
	return fresh, nil
}

// loaderOf is the results' loader column of r: fleet/id of the device
// that loaded a joined result, "" for a result of one device.
func loaderOf(r *wire.Result) string {
	if r.Loader == nil {
		return ""
	}
	return r.Loader.Fleet + "/" + r.Loader.Device
}

// SetStatus records a device's status message and reports whether it was
// applied. Of one boot of the device, a message of a newer connection
// (conn_seq) replaces an older one, and of one connection its end (the
// Last Will, lost, or offline) replaces its birth, never the other way
// round: so a stale will, or a birth that comes after its own will, is
// ignored, in whatever order the messages arrive. A message of another
// boot always applies.
func (s *Store) SetStatus(ctx context.Context, fleet, device string, st *wire.Status) (bool, error) {
	info := "{}"
	labels := "{}"
	if st.Info != nil {
		b, err := json.Marshal(st.Info)
		if err != nil {
			return false, fmt.Errorf("status %s/%s: %w", fleet, device, err)
		}
		info = string(b)
		if labels, err = s.db.D.LabelsJSON(st.Info.Labels); err != nil {
			return false, fmt.Errorf("status %s/%s: %w", fleet, device, err)
		}
	}
	online := st.State == wire.StatusOnline
	now := time.Now().UnixNano()
	// newer: the message is of another boot, a later connection, or the
	// end of the stored connection.
	const newer = `(devices.boot_id != excluded.boot_id OR devices.conn_seq < excluded.conn_seq
		OR (devices.conn_seq = excluded.conn_seq AND (devices.online OR NOT excluded.online)))`
	// A birth's info also fills a device known so far only by its will.
	const fills = `?10 AND (` + newer + ` OR devices.info = '{}')`
	res, err := s.db.Exec(ctx, s.db.W, `INSERT INTO devices (fleet, id, state, boot_id, conn_seq, online, info, labels, last_seen, updated)
		VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9)
		ON CONFLICT (fleet, id) DO UPDATE SET
			state = CASE WHEN `+newer+` THEN excluded.state ELSE devices.state END,
			boot_id = CASE WHEN `+newer+` THEN excluded.boot_id ELSE devices.boot_id END,
			conn_seq = CASE WHEN `+newer+` THEN excluded.conn_seq ELSE devices.conn_seq END,
			online = CASE WHEN `+newer+` THEN excluded.online ELSE devices.online END,
			busy_cmd = CASE WHEN `+newer+` AND NOT excluded.online THEN '' ELSE devices.busy_cmd END,
			info = CASE WHEN `+fills+` THEN excluded.info ELSE devices.info END,
			labels = CASE WHEN `+fills+` THEN excluded.labels ELSE devices.labels END,
			last_seen = excluded.last_seen, updated = excluded.updated
		WHERE `+newer+` OR `+fills,
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
// transaction: a fleet's heartbeats cost one commit, not one each. A
// heartbeat older than the one stored (by its own time) is left out.
func (s *Store) SetHeartbeats(ctx context.Context, hbs map[wire.Addr]*wire.Heartbeat) error {
	if len(hbs) == 0 {
		return nil
	}
	now := time.Now().UnixNano()
	rows := make([][]any, 0, len(hbs))
	for _, a := range sqldb.SortedAddrs(hbs) {
		hb := hbs[a]
		b, err := json.Marshal(hb)
		if err != nil {
			return fmt.Errorf("heartbeat %s/%s: %w", a.Fleet, a.Device, err)
		}
		busy := ""
		if hb.Busy {
			busy = hb.CommandID
		}
		rows = append(rows, []any{a.Fleet, a.Device, string(b), hb.At.UnixNano(), busy, now, now})
	}
	tx, err := s.db.W.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("heartbeats: begin: %w", s.db.Wrap(err))
	}
	defer tx.Rollback()
	if err := s.db.InsertRows(ctx, tx, "INSERT INTO devices (fleet, id, heartbeat, heartbeat_at, busy_cmd, last_seen, updated) VALUES ", 7, rows,
		` ON CONFLICT (fleet, id) DO UPDATE SET heartbeat = excluded.heartbeat, heartbeat_at = excluded.heartbeat_at,
			busy_cmd = excluded.busy_cmd, last_seen = `+s.db.D.Greatest()+`(devices.last_seen, excluded.last_seen)
		WHERE excluded.heartbeat_at >= devices.heartbeat_at`, nil); err != nil {
		return fmt.Errorf("heartbeats: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("heartbeats: commit: %w", s.db.Wrap(err))
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
	tx, err := s.db.W.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("command %s: begin: %w", c.ID, s.db.Wrap(err))
	}
	defer tx.Rollback()
	// commands keeps the first target of an id sent to several;
	// command_targets each of them.
	if _, err = s.db.Exec(ctx, tx, `INSERT INTO commands (id, fleet, target, kind, issued_at, expires_at, spec, raw)
		VALUES (?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING`,
		c.ID, fleet, target, string(c.Kind), c.IssuedAt.UnixNano(), c.ExpiresAt.UnixNano(), string(spec), raw); err != nil {
		return fmt.Errorf("command %s: %w", c.ID, err)
	}
	if _, err = s.db.Exec(ctx, tx, `INSERT INTO command_targets (command_id, fleet, target) VALUES (?,?,?) ON CONFLICT DO NOTHING`,
		c.ID, fleet, target); err != nil {
		return fmt.Errorf("command %s: target: %w", c.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("command %s: commit: %w", c.ID, s.db.Wrap(err))
	}
	return nil
}

// CommandSentTo reports whether command id was sent to the device
// fleet/device: to it by name, or to its whole fleet. A result may name
// only such a command.
func (s *Store) CommandSentTo(ctx context.Context, id, fleet, device string) (bool, error) {
	var one int
	err := s.db.QueryRow(ctx, s.db.R, `SELECT 1 FROM command_targets WHERE command_id = ? AND fleet = ? AND target IN (?, ?) LIMIT 1`,
		id, fleet, device, wire.AllDevices).Scan(&one)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("command %s of %s/%s: %w", id, fleet, device, s.db.Wrap(err))
	}
	return true, nil
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
	window := ""
	if w := ev.Window; w != nil {
		window = fmt.Sprintf("%s:%d", w.Edge, w.Run)
	}
	_, err := s.db.Exec(ctx, s.db.W, `INSERT INTO events (command_id, fleet, device, seq, state, reason, result_id, progress, at, received, window_edge)
		VALUES (?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING`, ev.CommandID, fleet, device, ev.Seq, string(ev.State), ev.Reason,
		ev.ResultID, progress, ev.At.UnixNano(), time.Now().UnixNano(), window)
	if err != nil {
		return fmt.Errorf("event %s/%s %s: %w", fleet, device, ev.CommandID, err)
	}
	return nil
}
