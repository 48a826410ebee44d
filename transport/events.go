package transport

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/wire"
)

// This file is a device's command events: sent at once when connected,
// otherwise kept in order in a bounded outbox and flushed after the next
// connect.

// outboxCap bounds the events kept while disconnected: a few hours of a
// busy device's progress events, under 1 MB.
const outboxCap = 4096

// PublishEvent sends a command event (QoS 1) on the device's event topic.
// While the client is disconnected, or when the publish fails, the event
// is kept in memory and sent, in order, after the next connect; the
// oldest are dropped beyond outboxCap. It fails only for an event that
// cannot be encoded or after Close.
func (c *Client) PublishEvent(ctx context.Context, e *wire.Event) error {
	if c.closed.Load() {
		return ErrClosed
	}
	b, err := e.MarshalMsg(nil)
	if err != nil {
		return fmt.Errorf("encode event: %w", err)
	}
	c.mu.Lock()
	queued := len(c.outbox) > 0
	c.mu.Unlock()
	if !queued && c.online.Load() {
		err := c.publishEvent(ctx, b)
		if err == nil || c.closed.Load() {
			return err
		}
		c.log.Info("event kept for the next connect", zap.String("cmd", e.CommandID), zap.Error(err))
	}
	c.mu.Lock()
	if len(c.outbox) == outboxCap {
		c.outbox = c.outbox[1:]
		c.lostEvts++
		c.log.Warn("event outbox full, oldest event dropped", zap.Int64("dropped", c.lostEvts))
	}
	c.outbox = append(c.outbox, b)
	c.mu.Unlock()
	if c.online.Load() {
		// Connected again meanwhile: do not wait for the next connect.
		c.flushEvents()
	}
	return nil
}

func (c *Client) publishEvent(ctx context.Context, b []byte) error {
	topic, err := c.topics.Topic(c.cfg.Fleet, c.cfg.Device, wire.TopicEvent)
	if err != nil {
		return err
	}
	return c.Publish(ctx, topic, 1, false, b)
}

// flushEvents sends the kept events, oldest first, until one fails. One
// flush runs at a time, so the events leave in order.
func (c *Client) flushEvents() {
	c.flushMu.Lock()
	defer c.flushMu.Unlock()
	for {
		c.mu.Lock()
		if len(c.outbox) == 0 {
			c.outbox = nil
			c.mu.Unlock()
			return
		}
		b := c.outbox[0]
		c.mu.Unlock()
		if err := c.publishEvent(c.ctx, b); err != nil {
			c.log.Info("kept events not sent yet", zap.Error(err))
			return
		}
		c.mu.Lock()
		if len(c.outbox) > 0 && &c.outbox[0][0] == &b[0] {
			c.outbox = c.outbox[1:]
		}
		c.mu.Unlock()
	}
}

// EventsKept reports the events waiting for a connection and those
// dropped from a full outbox since Dial.
func (c *Client) EventsKept() (waiting int, dropped int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.outbox), c.lostEvts
}
