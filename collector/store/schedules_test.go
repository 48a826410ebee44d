package store_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/scheduledb"
	"github.com/edgebench/edgebench/collector/store/sqldb"
	"github.com/edgebench/edgebench/collector/store/storetest"
)

// TestScheduleStore: a schedule's life in each engine, and that it
// survives the store's closing.
func TestScheduleStore(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		db := e.DB(t)
		s, err := store.Open(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)
		sch := storetest.Schedule("nightly")
		sch.Every, sch.Cron = 0, "30 2 * * *"
		if err := s.AddSchedule(ctx, sch, now); err != nil {
			t.Fatal(err)
		}
		if err := s.AddSchedule(ctx, storetest.Schedule("nightly"), now); !errors.Is(err, scheduledb.ErrExists) {
			t.Errorf("a second nightly: %v, want ErrExists", err)
		}
		for _, bad := range []*scheduledb.Schedule{
			{Name: "x", Trigger: sch.Trigger},                                      // neither
			{Name: "x", Every: time.Hour, Cron: "* * * * *", Trigger: sch.Trigger}, // both
			{Name: "x", Every: time.Hour, Jitter: time.Hour, Trigger: sch.Trigger},
			{Name: "x/y", Every: time.Hour, Trigger: sch.Trigger},
			{Name: "x", Every: time.Hour, Trigger: scheduledb.TriggerRequest{Spec: sch.Trigger.Spec}}, // no devices
		} {
			if err := s.AddSchedule(ctx, bad, now); err == nil {
				t.Errorf("%+v stored", bad)
			}
		}
		if err := s.AddSchedule(ctx, storetest.Schedule("often"), now); err != nil {
			t.Fatal(err)
		}
		if err := s.PauseSchedule(ctx, "often", true, now); err != nil {
			t.Fatal(err)
		}
		s.Close()

		s, err = store.Open(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ss, err := s.Schedules(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(ss) != 2 || ss[0].Name != "nightly" || ss[1].Name != "often" || !ss[1].Paused || ss[0].Paused {
			t.Fatalf("after reopening: %+v", ss)
		}
		if want := time.Date(2026, 12, 5, 2, 30, 0, 0, time.UTC); !ss[0].NextAt.Equal(want) || ss[0].Trigger.Fleet != "lab" || ss[0].Trigger.Spec.URL != "http://127.0.0.1/" {
			t.Errorf("nightly: %+v, want next %s", ss[0], want)
		}
		due, err := s.DueSchedules(ctx, now.Add(time.Hour))
		if err != nil || len(due) != 0 {
			t.Errorf("due while paused: %v %v", due, err)
		}
		later := now.Add(time.Hour)
		if err := s.PauseSchedule(ctx, "often", false, later); err != nil {
			t.Fatal(err)
		}
		if o, _ := s.Schedule(ctx, "often"); o.Paused || !o.NextAt.Equal(later.Add(time.Second)) {
			t.Errorf("resumed: %+v, want next %s (what fell due while paused is not fired)", o, later.Add(time.Second))
		}
		// Two collectors claim the same firing from the same reading of
		// the schedule: one gets it.
		o, err := s.Schedule(ctx, "often")
		if err != nil {
			t.Fatal(err)
		}
		var won int
		for _, who := range []string{"one", "two"} {
			ok, err := s.ClaimRun(ctx, o, o.NextAt, o.NextAt.Add(time.Second), nil, who, later)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				won++
			}
		}
		if runs, _ := s.ScheduleRuns(ctx, "often", 0); won != 1 || len(runs) != 1 {
			t.Errorf("claimed by %d collectors, %d runs recorded; want 1 and 1", won, len(runs))
		}
		if err := s.RemoveSchedule(ctx, "often"); err != nil {
			t.Fatal(err)
		}
		if err := s.RemoveSchedule(ctx, "often"); !errors.Is(err, sqldb.ErrNotFound) {
			t.Errorf("removed twice: %v", err)
		}
	})
}

// TestScheduleRunsRecord: what a firing sent and missed comes back as it
// was recorded, in each engine; a record that does not read back (its
// JSON damaged) is an error that names the schedule, the firing and the
// column, not a firing that sent nothing.
func TestScheduleRunsRecord(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		now := time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)
		sch := storetest.Schedule("often")
		if err := s.AddSchedule(ctx, sch, now); err != nil {
			t.Fatal(err)
		}
		if ok, err := s.ClaimRun(ctx, sch, sch.NextAt, sch.NextAt.Add(time.Second), nil, "one", now); err != nil || !ok {
			t.Fatalf("claim: %v %v", ok, err)
		}
		run := &scheduledb.ScheduleRun{Schedule: "often", DueAt: sch.NextAt, FiredAt: now, Collector: "one",
			Commands: []string{"C1", "C2"}, Devices: []string{"lab/pi-1", "lab/pi-2"},
			Missed: []scheduledb.Missed{{Device: "lab/pi-3", Reason: "offline"}}}
		if err := s.FinishRun(ctx, run); err != nil {
			t.Fatal(err)
		}
		runs, err := s.ScheduleRuns(ctx, "often", 0)
		if err != nil || len(runs) != 1 {
			t.Fatalf("runs %+v %v", runs, err)
		}
		if r := runs[0]; !slices.Equal(r.Commands, run.Commands) || !slices.Equal(r.Devices, run.Devices) || !slices.Equal(r.Missed, run.Missed) {
			t.Errorf("read back %+v, recorded %+v", r, run)
		}
		if _, err := s.W().ExecContext(ctx, s.Q("UPDATE schedule_runs SET missed = ? WHERE schedule = ?"), `[{"device": "lab/pi-3"`, "often"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ScheduleRuns(ctx, "often", 0); err == nil || !strings.Contains(err.Error(), "often") || !strings.Contains(err.Error(), "missed") {
			t.Errorf("a damaged record read back: %v", err)
		}
	})
}
