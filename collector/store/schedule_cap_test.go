package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/store/scheduledb"
	"github.com/edgebench/edgebench/collector/store/storetest"
)

// TestScheduleCapUnderConcurrentAdds: 40 additions at once against a cap
// of 10 store exactly 10 schedules, 10 added and 30 refused as too many,
// over 5 rounds, in each engine (the API counted the stored schedules and
// then added one, so additions at once could all pass the count at Max-1).
// A name already stored is refused as existing, not counted as too many.
// Each round has a minute: an addition that waits for a connection its
// own transaction holds fails rather than hangs.
func TestScheduleCapUnderConcurrentAdds(t *testing.T) {
	const most, adds, rounds = 10, 40, 5
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		now := time.Date(2026, 12, 6, 7, 0, 0, 0, time.UTC)
		for round := range rounds {
			ctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			start := make(chan struct{})
			errs := make([]error, adds)
			var wg sync.WaitGroup
			for i := range adds {
				wg.Go(func() {
					<-start
					errs[i] = s.AddScheduleUpTo(ctx, storetest.Schedule(fmt.Sprintf("r%d-%02d", round, i)), now, most)
				})
			}
			close(start)
			wg.Wait()
			added, refused := 0, 0
			for i, err := range errs {
				switch {
				case err == nil:
					added++
				case errors.Is(err, scheduledb.ErrTooManySchedules):
					refused++
				default:
					t.Errorf("round %d, addition %d: %v", round+1, i, err)
				}
			}
			ss, err := s.Schedules(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(ss) != most || added != most || refused != adds-most {
				t.Fatalf("round %d: %d stored, %d added, %d refused as too many; want %d, %d, %d",
					round+1, len(ss), added, refused, most, most, adds-most)
			}
			if round == 0 {
				err := s.AddScheduleUpTo(ctx, storetest.Schedule(ss[0].Name), now, most+1)
				if !errors.Is(err, scheduledb.ErrExists) {
					t.Errorf("a stored name under the cap: %v, want ErrExists", err)
				}
			}
			for _, sch := range ss {
				if err := s.RemoveSchedule(ctx, sch.Name); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}
