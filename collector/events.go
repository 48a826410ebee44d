package collector

// This file is what the collector refuses of a device's command events,
// as refuse is for its results: an event over the device's quota (its
// rate of events, its bytes of the day), or naming a command that was not
// sent to that device. A stolen board could otherwise fill the store with
// events on made-up command ids (1,000 events of 200 KiB took 199 MB), or
// add its own lines to another fleet's command: its status, the missed
// devices of a schedule's firing, whom a cancel goes to.

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/wire"
)

// takeEvent says whether the event ev, of n payload bytes, that device
// from published may be stored; a refused one is counted and logged
// (summed: a line a minute past the first). It cuts a reason longer than
// the device's quota allows. An error is the store's.
func (c *Collector) takeEvent(ctx context.Context, from wire.Addr, ev *wire.Event, n int) (bool, error) {
	from = wire.Addr{Fleet: from.Fleet, Device: from.Device}
	why, err := c.refuseEvent(ctx, from, ev, n)
	if err != nil || why == "" {
		return err == nil, err
	}
	c.eventsRefused.Add(1)
	c.drops.note("event refused", zap.String("reason", why), zap.String("cmd_id", ev.CommandID),
		zap.String("state", wire.Clip(string(ev.State))), zap.String("fleet", from.Fleet), zap.String("device", from.Device))
	return false, nil
}

// refuseEvent says why the event ev of device from is refused, "" when
// it is taken (its reason cut to the quota).
func (c *Collector) refuseEvent(ctx context.Context, from wire.Addr, ev *wire.Event, n int) (string, error) {
	if why, err := c.quotas.TakeEvent(ctx, from, int64(n), time.Now()); why != "" || err != nil {
		return why, err
	}
	ev.Reason, _ = c.quotas.Of(from).CutReason(ev.Reason)
	var ok bool
	err := c.whileUnavailable(ctx, func() error {
		return storeCall(ctx, c.cfg.storeTimeout, func(ctx context.Context) (err error) {
			ok, err = c.store.CommandSentTo(ctx, ev.CommandID, from.Fleet, from.Device)
			return err
		})
	})
	if err != nil {
		return "", err
	}
	if !ok {
		return fmt.Sprintf("command %s was not sent to %s/%s", wire.Clip(ev.CommandID), from.Fleet, from.Device), nil
	}
	return "", nil
}
