package collector

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/collector/escape"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/wire"
)

// Cancel asks the devices running load-test command id to stop it: each
// ends it as cancelled (its result says so) and is free for the next
// command. A command every device has finished is store.ErrNotRunning.
func (c *Collector) Cancel(ctx context.Context, id string) (*Triggered, error) {
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
	topics := wire.Topics{Prefix: c.cfg.Prefix}
	for _, t := range targets {
		signed, err := c.sign(cmd, t.Fleet, t.Device)
		if err != nil {
			return nil, fmt.Errorf("cancel: %w", err)
		}
		raw, err := signed.MarshalMsg(nil)
		if err != nil {
			return nil, fmt.Errorf("cancel: encode: %w", err)
		}
		if err := c.store.AddCommand(ctx, t.Fleet, t.Device, signed, raw); err != nil {
			return nil, fmt.Errorf("cancel: %w", err)
		}
		if err := c.client.PublishCommand(ctx, t.Fleet, t.Device, signed); err != nil {
			return nil, fmt.Errorf("cancel: %w", err)
		}
		topic, _ := topics.Topic(t.Fleet, t.Device, wire.TopicCmd)
		out.Topics = append(out.Topics, topic)
		if t.Device != wire.AllDevices {
			out.Devices = append(out.Devices, t.Fleet+"/"+t.Device)
		}
	}
	c.log.Info("cancel sent", zap.String("cmd_id", cmd.ID), zap.String("cancels", id), zap.Strings("topics", out.Topics))
	return out, nil
}
