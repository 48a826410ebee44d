package collector

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/wire"
)

// maxBackfill bounds the firings recorded as missed for the time no
// collector was running.
const maxBackfill = 100

// scheduler fires the schedules that fall due, checking every tick.
func (c *Collector) scheduler(tick time.Duration) {
	defer c.wg.Done()
	host, _ := os.Hostname()
	me := fmt.Sprintf("%s@%s/%d", c.cfg.ClientID, host, os.Getpid())
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		c.fireDue(c.ctx, me, time.Now())
	}
}

// fireDue claims and fires each schedule due at now.
func (c *Collector) fireDue(ctx context.Context, me string, now time.Time) {
	due, err := c.store.DueSchedules(ctx, now)
	if err != nil {
		if ctx.Err() == nil {
			c.log.Warn("schedules", zap.Error(err))
		}
		return
	}
	for i := range due {
		sch := &due[i]
		// The latest due time at or before now is fired; the earlier
		// ones (the collectors were down) are recorded as missed.
		at := sch.NextAt
		var missed []time.Time
		for {
			n := sch.Next(at)
			if n.IsZero() || n.After(now) {
				break
			}
			missed = append(missed, at)
			if len(missed) > maxBackfill {
				missed = missed[1:]
			}
			at = n
		}
		next := sch.Next(at)
		ok, err := c.store.ClaimRun(ctx, sch, at, next, missed, me, now)
		if err != nil {
			c.log.Warn("schedule claim", zap.String("schedule", sch.Name), zap.Error(err))
			continue
		}
		if !ok {
			continue // another collector fires it
		}
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			run := c.fire(ctx, sch, at, now, me)
			if err := c.store.FinishRun(context.WithoutCancel(ctx), run); err != nil {
				c.log.Warn("schedule run", zap.String("schedule", sch.Name), zap.Error(err))
			}
			c.scheduleAlert(sch, run)
		}()
	}
}

// fire sends a firing: one ordinary trigger, or with Jitter one per online
// device at a random moment of the jitter window. Devices offline or busy
// at the firing are recorded as missed.
func (c *Collector) fire(ctx context.Context, sch *store.Schedule, due, now time.Time, me string) *store.ScheduleRun {
	run := &store.ScheduleRun{Schedule: sch.Name, DueAt: due, FiredAt: now, Collector: me}
	req := sch.Trigger
	req.Spec.Labels = append([]wire.Label(nil), req.Spec.Labels...)
	req.Spec.Labels = slicesDeleteLabel(req.Spec.Labels, store.ScheduleLabel)
	req.Spec.Labels = append(req.Spec.Labels, wire.Label{K: store.ScheduleLabel, V: sch.Name})
	devs, err := c.store.Devices(ctx)
	if err != nil {
		run.Error = err.Error()
		return run
	}
	var online []store.Device
	for _, d := range devs {
		if !selected(&d, &req) {
			continue
		}
		addr := d.Fleet + "/" + d.ID
		switch {
		case !d.Online:
			run.Missed = append(run.Missed, store.Missed{Device: addr, Reason: "offline"})
		case d.BusyCommand != "" && !req.Spec.Queue:
			run.Missed = append(run.Missed, store.Missed{Device: addr, Reason: "busy with command " + d.BusyCommand})
		default:
			online = append(online, d)
		}
	}
	if req.Device != "" && len(run.Missed) > 0 && len(online) == 0 {
		return run // the one device is offline or busy: nothing sent
	}
	if sch.Jitter <= 0 {
		t, err := c.Trigger(ctx, req)
		if err != nil {
			run.Error = err.Error()
			return run
		}
		run.Commands, run.Devices = []string{t.CommandID}, t.Devices
		return run
	}
	if len(online) == 0 {
		run.Error = "no online device matches"
		return run
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, d := range online {
		wait := rand.N(sch.Jitter)
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			one := req
			one.Fleet, one.Device, one.Select = d.Fleet, d.ID, nil
			t, err := c.Trigger(ctx, one)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				run.Missed = append(run.Missed, store.Missed{Device: d.Fleet + "/" + d.ID, Reason: err.Error()})
				return
			}
			run.Commands = append(run.Commands, t.CommandID)
			run.Devices = append(run.Devices, t.Devices...)
		}()
	}
	wg.Wait()
	sort.Strings(run.Devices)
	return run
}

// selected reports whether d is one of the devices req chooses.
func selected(d *store.Device, req *store.TriggerRequest) bool {
	if req.Fleet != "" && d.Fleet != req.Fleet {
		return false
	}
	switch {
	case req.Device != "":
		return d.ID == req.Device
	case len(req.Select) > 0:
		return d.Matches(req.Select)
	}
	return true
}

func slicesDeleteLabel(ls []wire.Label, k string) []wire.Label {
	out := ls[:0]
	for _, l := range ls {
		if !strings.EqualFold(l.K, k) {
			out = append(out, l)
		}
	}
	return out
}
