package collector

import (
	"context"
	"errors"
	"fmt"

	"github.com/edgebench/edgebench/collector/store/scheduledb"
)

// errTooManySchedules is a schedule refused because Config.Schedules.Max
// are stored (409).
var errTooManySchedules = errors.New("too many schedules")

// scheduleWithinLimits checks a schedule the API is asked to add against
// Config.Schedules: its period and jitter, and the count already stored.
// Two additions at once may both pass the count at Max-1: the count is a
// bound on the work, not an exact quota.
func (c *Collector) scheduleWithinLimits(ctx context.Context, sch *scheduledb.Schedule) error {
	if err := sch.Check(); err != nil {
		return err
	}
	l := c.cfg.Schedules
	if err := sch.CheckLimits(l); err != nil {
		return err
	}
	ss, err := c.store.Schedules(ctx)
	if err != nil {
		return err
	}
	if len(ss) >= l.Max {
		return fmt.Errorf("schedule %s: %w: %d stored, this collector's most (serve --max-schedules); remove one first", sch.Name, errTooManySchedules, len(ss))
	}
	return nil
}
