package scheduledb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/edgebench/edgebench/collector/cron"
	"github.com/edgebench/edgebench/collector/store/sqldb"
	"github.com/edgebench/edgebench/wire"
)

// Schedule is a trigger fired by itself: every Every, or at the times of
// a cron expression (UTC). Each firing is an ordinary trigger (the same
// policy, signatures, events and results) whose results carry the label
// schedule=Name. Jitter spreads the devices' start over [0, Jitter): the
// firing then sends each matching online device its own command at a
// random moment of that window.
type Schedule struct {
	Name      string         `json:"name"`
	Every     time.Duration  `json:"every,omitempty"`
	Cron      string         `json:"cron,omitempty"`
	Jitter    time.Duration  `json:"jitter,omitempty"`
	Trigger   TriggerRequest `json:"trigger"`
	Paused    bool           `json:"paused"`
	NextAt    time.Time      `json:"next_at"`
	CreatedAt time.Time      `json:"created_at"`
	LastRun   *ScheduleRun   `json:"last_run,omitempty"`
}

// ScheduleRun is one firing of a schedule, or one it could not fire.
type ScheduleRun struct {
	Schedule  string    `json:"schedule"`
	DueAt     time.Time `json:"due_at"`
	FiredAt   time.Time `json:"fired_at"`
	Collector string    `json:"collector"` // which collector fired it
	Commands  []string  `json:"commands"`
	Devices   []string  `json:"devices"` // fleet/id sent the command
	Missed    []Missed  `json:"missed"`  // devices that did not run it, and why
	Error     string    `json:"error,omitempty"`
}

// Missed is a device a firing did not reach, or that refused it.
type Missed struct {
	Device string `json:"device"` // fleet/id
	Reason string `json:"reason"`
}

var scheduleName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Check reports what is wrong with a schedule before it is stored.
func (s *Schedule) Check() error {
	if !scheduleName.MatchString(s.Name) {
		return fmt.Errorf("schedule name %q: want 1-64 of A-Z a-z 0-9 . _ -, starting with a letter or digit", s.Name)
	}
	if (s.Every > 0) == (s.Cron != "") {
		return errors.New("schedule: give one of --every and --cron")
	}
	if s.Every < 0 || (s.Cron == "" && s.Every < time.Second) {
		return errors.New("schedule: --every must be at least 1s")
	}
	if s.Cron != "" {
		if _, err := cron.Parse(s.Cron); err != nil {
			return err
		}
	}
	if s.Jitter < 0 || (s.Every > 0 && s.Jitter >= s.Every) {
		return errors.New("schedule: --jitter must be at least 0 and shorter than --every")
	}
	r := s.Trigger
	if r.Spec.URL == "" {
		return errors.New("schedule: no URL")
	}
	if err := r.Spec.Check(); err != nil {
		return fmt.Errorf("schedule: %w", err)
	}
	if r.Device == "" && r.Fleet == "" && len(r.Select) == 0 {
		return errors.New("schedule: say which devices: --device, --fleet or --select")
	}
	if r.Device != "" && len(r.Select) > 0 {
		return errors.New("schedule: --device and --select exclude each other")
	}
	if err := r.CheckKinds(); err != nil {
		return fmt.Errorf("schedule: %w", err)
	}
	return nil
}

// Next is the first due time strictly after t.
func (s *Schedule) Next(t time.Time) time.Time {
	if s.Every > 0 {
		// A period that ends past what the store holds would come
		// back from it wrapped around (251 years from 2026: 1944).
		if n := t.Add(s.Every); !n.After(lastStorable()) {
			return n
		}
		return time.Time{}
	}
	c, err := cron.Parse(s.Cron)
	if err != nil {
		return time.Time{}
	}
	return c.Next(t)
}

// ErrExists is returned when a schedule of that name is already stored.
var ErrExists = errors.New("already exists")

// ErrTooManySchedules is a schedule AddScheduleUpTo refused because its
// most are stored.
var ErrTooManySchedules = errors.New("too many schedules")

// AddSchedule stores a new schedule; its first firing is its next due time
// after now.
func (s *ScheduleTables) AddSchedule(ctx context.Context, sch *Schedule, now time.Time) error {
	return s.AddScheduleUpTo(ctx, sch, now, 0)
}

// AddScheduleUpTo is AddSchedule while fewer than most schedules are
// stored (most 0: any number), else ErrTooManySchedules. The count and the
// insert are one transaction, the table locked for it on PostgreSQL
// (SQLite has one writer): additions at once, from this collector or
// another on the same database, never store more than most.
func (s *ScheduleTables) AddScheduleUpTo(ctx context.Context, sch *Schedule, now time.Time, most int) error {
	if err := sch.Check(); err != nil {
		return err
	}
	sch.CreatedAt = now.UTC()
	sch.NextAt = sch.Next(now).UTC()
	if sch.NextAt.IsZero() && sch.Every > 0 {
		return fmt.Errorf("schedule: --every %v: its first firing would be after %d, past the times the store holds", sch.Every, lastStorable().Year())
	}
	if sch.NextAt.IsZero() {
		return fmt.Errorf("schedule: cron %q is never due", sch.Cron)
	}
	req, err := json.Marshal(sch.Trigger)
	if err != nil {
		return err
	}
	tx, err := s.db.W.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("schedule: %w", err)
	}
	defer tx.Rollback()
	if most > 0 {
		if s.db.D.PG { // against itself, not against readers
			if _, err := s.db.Exec(ctx, tx, `LOCK TABLE schedules IN SHARE ROW EXCLUSIVE MODE`); err != nil {
				return fmt.Errorf("schedule: %w", err)
			}
		}
		var n int
		if err := s.db.QueryRow(ctx, tx, `SELECT count(*) FROM schedules`).Scan(&n); err != nil {
			return fmt.Errorf("schedule: %w", err)
		}
		if n >= most {
			return fmt.Errorf("schedule %s: %w: %d stored, this collector's most", sch.Name, ErrTooManySchedules, n)
		}
	}
	res, err := s.db.Exec(ctx, tx, `INSERT INTO schedules (name, every_ns, cron, jitter_ns, request, paused, next_at, created_at)
		VALUES (?,?,?,?,?,?,?,?) ON CONFLICT (name) DO NOTHING`,
		sch.Name, int64(sch.Every), sch.Cron, int64(sch.Jitter), string(req), sch.Paused, sch.NextAt.UnixNano(), sch.CreatedAt.UnixNano())
	if err != nil {
		return fmt.Errorf("schedule: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("schedule %s: %w", sch.Name, ErrExists)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("schedule: %w", err)
	}
	return nil
}

const scheduleCols = `name, every_ns, cron, jitter_ns, request, paused, next_at, created_at`

func scanSchedule(sc interface{ Scan(...any) error }) (*Schedule, error) {
	var sch Schedule
	var every, jitter, next, created int64
	var req string
	if err := sc.Scan(&sch.Name, &every, &sch.Cron, &jitter, &req, &sch.Paused, &next, &created); err != nil {
		return nil, err
	}
	sch.Every, sch.Jitter = time.Duration(every), time.Duration(jitter)
	sch.NextAt, sch.CreatedAt = sqldb.UnixTime(next), sqldb.UnixTime(created)
	if err := json.Unmarshal([]byte(req), &sch.Trigger); err != nil {
		return nil, fmt.Errorf("schedule %s: %w", sch.Name, err)
	}
	return &sch, nil
}

// Schedules lists the schedules by name, without their runs (the
// store's Schedules adds each one's latest).
func (s *ScheduleTables) Schedules(ctx context.Context) ([]Schedule, error) {
	rows, err := s.db.Query(ctx, s.db.R, `SELECT `+scheduleCols+` FROM schedules ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("schedules: %w", err)
	}
	var out []Schedule
	for rows.Next() {
		sch, err := scanSchedule(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("schedules: %w", err)
		}
		out = append(out, *sch)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("schedules: %w", err)
	}
	return out, nil
}

// RemoveSchedule deletes a schedule; the record of its runs stays.
func (s *ScheduleTables) RemoveSchedule(ctx context.Context, name string) error {
	res, err := s.db.Exec(ctx, s.db.W, `DELETE FROM schedules WHERE name = ?`, name)
	if err != nil {
		return fmt.Errorf("schedule %s: %w", name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("schedule %s: %w", name, sqldb.ErrNotFound)
	}
	return nil
}

// PauseSchedule pauses or resumes a schedule. A resumed schedule's next
// firing is its first due time after now: what fell due while it was
// paused is not fired.
func (s *ScheduleTables) PauseSchedule(ctx context.Context, name string, paused bool, now time.Time) error {
	sch, err := s.Schedule(ctx, name)
	if err != nil {
		return err
	}
	next := sch.NextAt
	if !paused && !next.After(now) {
		next = sch.Next(now)
	}
	if _, err := s.db.Exec(ctx, s.db.W, `UPDATE schedules SET paused = ?, next_at = ? WHERE name = ?`, paused, nextAtNano(next), name); err != nil {
		return fmt.Errorf("schedule %s: %w", name, err)
	}
	return nil
}

// DueSchedules are the schedules not paused whose next firing is due.
func (s *ScheduleTables) DueSchedules(ctx context.Context, now time.Time) ([]Schedule, error) {
	rows, err := s.db.Query(ctx, s.db.W, `SELECT `+scheduleCols+` FROM schedules WHERE NOT paused AND next_at <= ? ORDER BY next_at`, now.UnixNano())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Schedule
	for rows.Next() {
		sch, err := scanSchedule(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *sch)
	}
	return out, rows.Err()
}

// ClaimRun claims the firing of sch due at due for collector: it inserts
// the run's row and moves the schedule's next_at on, in one transaction.
// Only the collector whose insert took the row fires it (with several
// collectors on one PostgreSQL, the others' inserts find it there). The
// firings due before due, missed while no collector ran, are recorded as
// missed too.
func (s *ScheduleTables) ClaimRun(ctx context.Context, sch *Schedule, due, next time.Time, missed []time.Time, collector string, now time.Time) (bool, error) {
	tx, err := s.db.W.BeginTx(ctx, nil)
	if err != nil {
		return false, s.db.Wrap(err)
	}
	defer tx.Rollback()
	res, err := s.db.Exec(ctx, tx, `INSERT INTO schedule_runs (schedule, due_at, fired_at, collector) VALUES (?,?,?,?) ON CONFLICT DO NOTHING`,
		sch.Name, due.UnixNano(), now.UnixNano(), collector)
	if err != nil {
		return false, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	for _, m := range missed {
		if _, err := s.db.Exec(ctx, tx, `INSERT INTO schedule_runs (schedule, due_at, fired_at, collector, error) VALUES (?,?,?,?,?) ON CONFLICT DO NOTHING`,
			sch.Name, m.UnixNano(), now.UnixNano(), collector, "not fired: no collector was running"); err != nil {
			return false, err
		}
	}
	if _, err := s.db.Exec(ctx, tx, `UPDATE schedules SET next_at = ? WHERE name = ? AND next_at = ?`, nextAtNano(next), sch.Name, sch.NextAt.UnixNano()); err != nil {
		return false, err
	}
	return true, s.db.Wrap(tx.Commit())
}

// FinishRun records what a claimed firing sent and missed.
func (s *ScheduleTables) FinishRun(ctx context.Context, r *ScheduleRun) error {
	missed := r.Missed
	if missed == nil {
		missed = []Missed{}
	}
	var cols [3]string // commands, devices, missed
	for i, v := range []any{strs(r.Commands), strs(r.Devices), missed} {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("schedule %s, firing due at %s: %w", r.Schedule, r.DueAt.UTC().Format(time.RFC3339), err)
		}
		cols[i] = string(b)
	}
	_, err := s.db.Exec(ctx, s.db.W, `UPDATE schedule_runs SET commands = ?, devices = ?, missed = ?, error = ? WHERE schedule = ? AND due_at = ?`,
		cols[0], cols[1], cols[2], r.Error, r.Schedule, r.DueAt.UnixNano())
	return err
}

func strs(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// TriggerRequest asks devices to run a load test. Exactly one way of
// choosing devices is used: Device (with Fleet when the id is in several
// fleets), Fleet alone (every device of it, through the fleet's _all
// topic), or Select (the known devices whose labels or system-info fields
// match every pair, optionally within Fleet).
type TriggerRequest struct {
	Fleet  string            `json:"fleet,omitempty"`
	Device string            `json:"device,omitempty"`
	Select map[string]string `json:"select,omitempty"`
	Spec   wire.LoadTestSpec `json:"spec"`
	TTL    time.Duration     `json:"ttl,omitempty"` // until the command expires; default 10 min
	// Capacity, when set, makes the command a capacity search (edgebench
	// capacity) whose trials are Spec's load test.
	Capacity *wire.CapacitySpec `json:"capacity,omitempty"`
	// TargetDevice, with Device, makes it a run across two devices:
	// Device loads Spec's URL, which TargetDevice (of TargetFleet, by
	// default Device's fleet) serves and watches itself on; Spec.Watch
	// names the target's processes. The result is TargetDevice's.
	TargetDevice string `json:"target_device,omitempty"`
	TargetFleet  string `json:"target_fleet,omitempty"`
	// Serve, when set, starts the built-in target on the devices instead
	// of a load test (Spec has no URL).
	Serve *wire.ServeSpec `json:"serve,omitempty"`
}

// CheckKinds reports what is wrong with the kind of command r asks for:
// a run across two devices needs one loader named by --device, and
// another device as its target; serve is no load test.
func (r *TriggerRequest) CheckKinds() error {
	switch {
	case r.Serve != nil && (r.Spec.URL != "" || r.Capacity != nil || r.TargetDevice != ""):
		return errors.New("serve starts the built-in target: no URL, capacity or --target-device with it")
	case r.Serve != nil && r.Serve.DurationMS <= 0:
		return errors.New("serve: give how long (-d 10m)")
	case r.TargetDevice == "" && r.TargetFleet != "":
		return errors.New("--target-fleet goes with --target-device")
	case r.TargetDevice == "":
		return nil
	case r.Device == "" || len(r.Select) > 0:
		return errors.New("--target-device needs one loader: --device ID (not --select or a whole fleet)")
	case r.TargetDevice == r.Device && (r.TargetFleet == "" || r.TargetFleet == r.Fleet):
		return fmt.Errorf("--target-device %s is the loader itself: a run on one device needs no target", r.Device)
	}
	return nil
}

// Schedule returns one schedule.
func (s *ScheduleTables) Schedule(ctx context.Context, name string) (*Schedule, error) {
	sch, err := scanSchedule(s.db.QueryRow(ctx, s.db.R, `SELECT `+scheduleCols+` FROM schedules WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("schedule %s: %w", name, sqldb.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("schedule %s: %w", name, s.db.Wrap(err))
	}
	return sch, nil
}
