package transport

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/wire"
)

// This file is commands: the collector publishes them to a device or a
// fleet, a device subscribes to its own and to its fleet's.

// PublishCommand sends a command (QoS 1) to a device, or to every device
// of the fleet with device "_all".
func (c *Client) PublishCommand(ctx context.Context, fleet, device string, cmd *wire.Command) error {
	topic, err := c.topics.Topic(fleet, device, wire.TopicCmd)
	if err != nil {
		return err
	}
	b, err := cmd.MarshalMsg(nil)
	if err != nil {
		return fmt.Errorf("encode command %s: %w", cmd.ID, err)
	}
	return c.Publish(ctx, topic, 1, false, b)
}

// SubscribeCommands delivers the commands sent to this device and to its
// fleet's _all topic. Malformed commands are logged and dropped.
func (c *Client) SubscribeCommands(h func(ctx context.Context, cmd *wire.Command)) error {
	for _, dev := range []string{c.cfg.Device, wire.AllDevices} {
		topic, err := c.topics.Topic(c.cfg.Fleet, dev, wire.TopicCmd)
		if err != nil {
			return err
		}
		err = c.Subscribe(topic, 1, func(ctx context.Context, topic string, b []byte) {
			cmd, err := wire.DecodeCommand(b)
			if err != nil {
				c.log.Warn("command dropped", zap.String("topic", topic), zap.Error(err))
				return
			}
			h(ctx, cmd)
		})
		if err != nil {
			return err
		}
	}
	return nil
}
