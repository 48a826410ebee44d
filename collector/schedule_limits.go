package collector

import (
	"github.com/edgebench/edgebench/collector/store/scheduledb"
)

// scheduleWithinLimits checks a schedule the API is asked to add against
// Config.Schedules: its period and jitter. The count already stored is
// checked by the store as it adds it (AddScheduleUpTo), in the same
// transaction: two additions at once cannot both pass it at Max-1.
func (c *Collector) scheduleWithinLimits(sch *scheduledb.Schedule) error {
	if err := sch.Check(); err != nil {
		return err
	}
	return sch.CheckLimits(c.cfg.Schedules)
}
