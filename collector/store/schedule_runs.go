package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/edgebench/edgebench/collector/store/scheduledb"
	"github.com/edgebench/edgebench/collector/store/sqldb"
	"github.com/edgebench/edgebench/wire"
)

// Schedules lists the schedules by name, each with its latest run.
func (s *Store) Schedules(ctx context.Context) ([]scheduledb.Schedule, error) {
	out, err := s.ScheduleTables.Schedules(ctx)
	if err != nil {
		return nil, err
	}
	for i := range out {
		runs, err := s.ScheduleRuns(ctx, out[i].Name, 1)
		if err != nil {
			return nil, err
		}
		if len(runs) > 0 {
			out[i].LastRun = &runs[0]
		}
	}
	return out, nil
}

// ScheduleRuns lists a schedule's runs, newest first (limit 0: all). A
// device that rejected a firing's command (busy, or its policy) is listed
// among the run's missed with its reason.
func (s *Store) ScheduleRuns(ctx context.Context, name string, limit int) ([]scheduledb.ScheduleRun, error) {
	q := `SELECT schedule, due_at, fired_at, collector, commands, devices, missed, error FROM schedule_runs WHERE schedule = ? ORDER BY due_at DESC`
	if limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", limit)
	}
	rows, err := s.db.Query(ctx, s.db.R, q, name)
	if err != nil {
		return nil, fmt.Errorf("schedule runs: %w", err)
	}
	var out []scheduledb.ScheduleRun
	for rows.Next() {
		var r scheduledb.ScheduleRun
		var due, fired int64
		var cmds, devs, missed string
		if err := rows.Scan(&r.Schedule, &due, &fired, &r.Collector, &cmds, &devs, &missed, &r.Error); err != nil {
			rows.Close()
			return nil, fmt.Errorf("schedule runs: %w", err)
		}
		r.DueAt, r.FiredAt = sqldb.UnixTime(due), sqldb.UnixTime(fired)
		for _, c := range []struct {
			name, text string
			dst        any
		}{{"commands", cmds, &r.Commands}, {"devices", devs, &r.Devices}, {"missed", missed, &r.Missed}} {
			if err := json.Unmarshal([]byte(c.text), c.dst); err != nil {
				rows.Close()
				return nil, fmt.Errorf("schedule runs: %s, firing due at %s: %s: %w", r.Schedule, r.DueAt.UTC().Format(time.RFC3339), c.name, err)
			}
		}
		out = append(out, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("schedule runs: %w", err)
	}
	for i := range out {
		for _, id := range out[i].Commands {
			evs, err := s.Events(ctx, id)
			if err != nil {
				return nil, err
			}
			for _, e := range evs {
				if e.State == wire.StateRejected && !slices.ContainsFunc(out[i].Missed, func(m scheduledb.Missed) bool { return m.Device == e.Fleet+"/"+e.Device }) {
					out[i].Missed = append(out[i].Missed, scheduledb.Missed{Device: e.Fleet + "/" + e.Device, Reason: "rejected: " + e.Reason})
				}
			}
		}
	}
	return out, nil
}
