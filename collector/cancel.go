package collector

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/collector/escape"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/sqldb"
	"github.com/edgebench/edgebench/wire"
)

// Cancel asks the devices running load-test command id to stop it: each
// ends it as cancelled (its result says so) and is free for the next
// command. A command every device has finished is store.ErrNotRunning.
func (c *Collector) Cancel(ctx context.Context, id string) (*Triggered, error) {
	// A run across two devices (its id, or its watch's): its driver
	// cancels both devices' commands.
	switch p, err := c.store.Pair(ctx, id); {
	case err == nil:
		return c.cancelPair(ctx, p)
	case !errors.Is(err, sqldb.ErrNotFound):
		return nil, fmt.Errorf("cancel: %w", err)
	}
	targets, err := c.store.CancelTargets(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("cancel: %w", err)
	}
	if len(targets) == 0 {
		return nil, fmt.Errorf("cancel: command %s is %w: every device it went to has finished it", escape.Printable(id), store.ErrNotRunning)
	}
	now := time.Now().UTC()
	cmd := &wire.Command{V: wire.SchemaVersion, ID: wire.NewID(), IssuedAt: now, ExpiresAt: now.Add(time.Minute),
		Kind: wire.KindCancel, Spec: wire.CommandSpec{Cancel: &wire.CancelSpec{CommandID: id}}}
	out := &Triggered{CommandID: cmd.ID}
	for _, t := range targets {
		topic, err := c.send(ctx, t.Fleet, t.Device, cmd)
		if err != nil {
			return nil, fmt.Errorf("cancel: %w", err)
		}
		out.Topics = append(out.Topics, topic)
		if t.Device != wire.AllDevices {
			out.Devices = append(out.Devices, t.Fleet+"/"+t.Device)
		}
	}
	c.log.Info("cancel sent", zap.String("cmd_id", cmd.ID), zap.String("cancels", id), zap.Strings("topics", out.Topics))
	return out, nil
}
