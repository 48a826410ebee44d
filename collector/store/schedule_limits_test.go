package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/store/storetest"
)

// TestLongPeriodNeverWraps: a period whose next firing falls past 2262
// (where the store's Unix nanoseconds end) is refused when added, and one
// whose next firing after a firing would fall there is stored as never
// due again: not wrapped around to a date before 1970, due at once (a
// 251-year period fired at once with a due date of 1944 on main at
// 588e3ea), in each engine.
func TestLongPeriodNeverWraps(t *testing.T) {
	const year = 365 * 24 * time.Hour
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		now := time.Date(2026, 12, 6, 7, 0, 0, 0, time.UTC)
		ages := storetest.Schedule("ages")
		ages.Every = 251 * year
		if err := s.AddSchedule(ctx, ages, now); err == nil || !strings.Contains(err.Error(), "after 2262") {
			t.Errorf("a 251-year period: %v, want refused", err)
		}
		long := storetest.Schedule("long")
		long.Every = 200 * year
		if err := s.AddSchedule(ctx, long, now); err != nil {
			t.Fatal(err)
		}
		if got := long.NextAt; got.Year() != 2226 {
			t.Fatalf("first firing %v, want in 2226", got)
		}
		next := long.Next(long.NextAt)
		if !next.IsZero() {
			t.Errorf("the firing after 2226 is %v, want none (past 2262)", next)
		}
		if ok, err := s.ClaimRun(ctx, long, long.NextAt, next, nil, "c", long.NextAt); !ok || err != nil {
			t.Fatalf("claim: %v %v", ok, err)
		}
		for _, at := range []time.Time{now, long.NextAt, time.Date(2262, 1, 1, 0, 0, 0, 0, time.UTC)} {
			due, err := s.DueSchedules(ctx, at)
			if err != nil || len(due) != 0 {
				t.Errorf("due at %v: %v %v, want none", at, due, err)
			}
		}
		if err := s.PauseSchedule(ctx, "long", true, now); err != nil {
			t.Fatal(err)
		}
		if err := s.PauseSchedule(ctx, "long", false, time.Date(2261, 1, 1, 0, 0, 0, 0, time.UTC)); err != nil {
			t.Fatal(err)
		}
		if due, err := s.DueSchedules(ctx, time.Date(2262, 1, 1, 0, 0, 0, 0, time.UTC)); err != nil || len(due) != 0 {
			t.Errorf("resumed in 2261: due %v %v, want none", due, err)
		}
	})
}
