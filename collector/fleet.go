package collector

import (
	"context"
	"fmt"
	"os"

	"github.com/edgebench/edgebench/collector/alerts"
	"github.com/edgebench/edgebench/collector/schedules"
	"github.com/edgebench/edgebench/collector/store/scheduledb"
)

// startFleet starts what watches the fleet over time: the scheduler and
// the alerts, each run by a goroutine of the collector until it stops.
func (c *Collector) startFleet() {
	publish := func(ctx context.Context, topic string, retained bool, body []byte) error {
		return c.client.Publish(ctx, topic, 1, retained, body)
	}
	c.alerts = alerts.New(c.cfg.Alerts, c.store, publish, c.cfg.Prefix, c.log)
	host, _ := os.Hostname()
	c.sched = schedules.New(schedules.Config{Store: c.store, Fired: c.alerts.Missed, Log: c.log,
		Name: fmt.Sprintf("%s@%s/%d", c.cfg.ClientID, host, os.Getpid()),
		Trigger: func(ctx context.Context, req scheduledb.TriggerRequest) (string, []string, error) {
			t, err := c.Trigger(ctx, req)
			if err != nil {
				return "", nil, err
			}
			return t.CommandID, t.Devices, nil
		}})
	c.wg.Add(2)
	go func() {
		defer c.wg.Done()
		c.sched.Run(c.ctx)
	}()
	go func() {
		defer c.wg.Done()
		c.alerts.Run(c.ctx)
	}()
}

// AlertStats returns the alerts' counts.
func (c *Collector) AlertStats() alerts.Stats {
	if c.alerts == nil {
		return alerts.Stats{}
	}
	return c.alerts.Stats()
}
