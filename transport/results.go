package transport

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/wire"
)

// This file is a device's results: spooled before they are published,
// resent on every connect and every ResendInterval, and again whenever a
// collector announces a new connection, until the collector's ack removes
// them from the spool (or rejects them for good). The collector's side is
// subscriber.go.

// watchAcks subscribes a device's client to its ack topic and to the
// collector's status, and starts the goroutine that handles the acks.
func (c *Client) watchAcks() error {
	topic, err := c.topics.Topic(c.cfg.Fleet, c.cfg.Device, wire.TopicAck)
	if err != nil {
		return fmt.Errorf("mqtt client: %w", err)
	}
	c.subs[topic] = subscription{qos: 1}
	c.subs[c.topics.CollectorStatus()] = subscription{qos: 1} // routed to onCollectorStatus
	c.wg.Add(1)
	go c.acker()
	return nil
}

// PublishResult spools r and then, if connected, publishes it at QoS 1. It
// returns once r is on disk: a publish that fails is retried on the next
// connect and every ResendInterval until the collector's ack removes it
// (see WaitAck). When the spool refuses r (a full disk), r is kept in
// memory instead, published and resent all the same, and the error wraps
// ErrKeptInMemory. Empty ID, V, Fleet and Device are filled in.
func (c *Client) PublishResult(ctx context.Context, r *wire.Result) error {
	if c.opts.Spool == nil {
		return errors.New("publish result: the client has no spool")
	}
	if r.ID == "" {
		r.ID = wire.NewID()
	}
	if r.V == 0 {
		r.V = wire.SchemaVersion
	}
	if r.Fleet == "" {
		r.Fleet = c.cfg.Fleet
	}
	if r.Device == "" {
		r.Device = c.cfg.Device
	}
	if r.Fleet != c.cfg.Fleet || r.Device != c.cfg.Device {
		return fmt.Errorf("publish result %s: for %s/%s, this client is %s/%s", r.ID, r.Fleet, r.Device, c.cfg.Fleet, c.cfg.Device)
	}
	if err := wire.ValidMessageID(r.ID); err != nil {
		return fmt.Errorf("publish result: %w", err)
	}
	b, err := r.MarshalMsg(nil)
	if err != nil {
		return fmt.Errorf("publish result %s: encode: %w", r.ID, err)
	}
	if len(b) > c.cfg.MaxPayload {
		return fmt.Errorf("publish result %s: %d bytes, cap %d: %w", r.ID, len(b), c.cfg.MaxPayload, wire.ErrTooLarge)
	}
	var spoolErr error
	if err := c.opts.Spool.Put(r.ID, b); err != nil {
		if !c.keep(r.ID, b) {
			return fmt.Errorf("publish result: %w (and %d results are kept in memory already)", err, keptCap)
		}
		spoolErr = fmt.Errorf("result %s not spooled, %w: %w", r.ID, ErrKeptInMemory, err)
		c.log.Error("result not spooled; kept in memory until the collector acknowledges it, lost if the process ends first",
			zap.String("result_id", r.ID), zap.Error(err))
	}
	if c.restored.Load() {
		if err := c.sendResult(ctx, r.ID, b); err != nil {
			c.log.Info("result kept, publish deferred", zap.String("result_id", r.ID), zap.Error(err))
		}
	}
	return spoolErr
}

// ErrKeptInMemory is wrapped in PublishResult's error when the spool
// could not take a result (a full disk, a full spool): the result is
// published all the same and kept in memory, resent like a spooled one,
// until the collector acknowledges it; it is lost if the process ends
// first.
var ErrKeptInMemory = errors.New("kept in memory until acknowledged")

// keptCap bounds the results kept in memory when the spool refuses them.
const keptCap = 16

// keep holds a result the spool refused in memory, unless keptCap are
// held already.
func (c *Client) keep(id string, b []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.kept) >= keptCap {
		return false
	}
	if c.kept == nil {
		c.kept = map[string][]byte{}
	}
	c.kept[id] = b
	return true
}

// held reports whether result id waits for its ack, spooled or kept.
func (c *Client) held(id string) bool {
	c.mu.Lock()
	_, ok := c.kept[id]
	c.mu.Unlock()
	return ok || c.opts.Spool.Has(id)
}

// pending lists the results waiting for an ack, spooled or kept, oldest
// first (ULIDs sort by time).
func (c *Client) pending() []string {
	ids := c.opts.Spool.List()
	c.mu.Lock()
	for id := range c.kept {
		ids = append(ids, id)
	}
	c.mu.Unlock()
	slices.Sort(ids)
	return slices.Compact(ids)
}

// payload is the bytes of a result waiting for its ack.
func (c *Client) payload(id string) ([]byte, error) {
	c.mu.Lock()
	b, ok := c.kept[id]
	c.mu.Unlock()
	if ok {
		return b, nil
	}
	return c.opts.Spool.Get(id)
}

// RejectedError is a result the collector refused for good; the device
// moved it to its spool's rejected/ folder.
type RejectedError struct {
	ResultID string
	Reason   string
}

func (e *RejectedError) Error() string {
	return "result " + e.ResultID + " rejected by the collector: " + e.Reason
}

// WaitAck waits until the collector has acknowledged result id (it is no
// longer spooled) or ctx ends. A result the collector refused for good is
// a *RejectedError.
func (c *Client) WaitAck(ctx context.Context, id string) error {
	if c.opts.Spool == nil {
		return errors.New("wait ack: the client has no spool")
	}
	ch := make(chan error, 1)
	c.mu.Lock()
	c.waiters[id] = append(c.waiters[id], ch)
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		ws := c.waiters[id]
		for i, w := range ws {
			if w == ch {
				ws = append(ws[:i], ws[i+1:]...)
				break
			}
		}
		if len(ws) == 0 {
			delete(c.waiters, id)
		} else {
			c.waiters[id] = ws
		}
		c.mu.Unlock()
	}()
	if !c.held(id) {
		return c.rejection(id)
	}
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		return fmt.Errorf("wait ack %s: %w", id, ctx.Err())
	case <-c.ctx.Done():
		return ErrClosed
	}
}

func (c *Client) sendResult(ctx context.Context, id string, b []byte) error {
	topic, err := c.topics.Topic(c.cfg.Fleet, c.cfg.Device, wire.TopicResult)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.lastSent[id] = time.Now()
	c.mu.Unlock()
	return c.Publish(ctx, topic, 1, false, b)
}

// replay publishes the spooled results not sent within the last interval
// (not sent on this connection when interval is 0), oldest first, while
// connected.
func (c *Client) replay(interval time.Duration) {
	if c.opts.Spool == nil {
		return
	}
	for _, id := range c.pending() {
		if c.ctx.Err() != nil || !c.online.Load() {
			return
		}
		c.mu.Lock()
		last, sent := c.lastSent[id]
		c.mu.Unlock()
		if sent && (interval == 0 || time.Since(last) < interval) {
			continue
		}
		b, err := c.payload(id)
		if err != nil {
			c.log.Warn("spooled result unreadable, set aside", zap.String("result_id", id), zap.Error(err))
			continue
		}
		if !sent {
			if why := c.unsendable(b); why != "" {
				c.reject(&RejectedError{ResultID: id, Reason: why})
				continue
			}
		}
		if err := c.sendResult(c.ctx, id, b); err != nil {
			c.log.Info("replay interrupted", zap.String("result_id", id), zap.Error(err))
			return
		}
	}
}

// unsendable says why a spooled result can never be delivered by this
// client, "" when it can: it does not decode (a newer schema aside, which
// a newer collector may take), or it is another fleet's or device's, left
// by a changed device_id.
func (c *Client) unsendable(b []byte) string {
	r, err := wire.DecodeResultMax(b, c.cfg.MaxPayload)
	switch {
	case errors.Is(err, wire.ErrVersion):
		return ""
	case err != nil:
		return err.Error()
	case r.Fleet != c.cfg.Fleet || r.Device != c.cfg.Device:
		return fmt.Sprintf("result of %s/%s, this device is %s/%s", r.Fleet, r.Device, c.cfg.Fleet, c.cfg.Device)
	}
	return ""
}

// acker removes acknowledged results from the spool, and moves rejected
// ones to rejected/.
func (c *Client) acker() {
	defer c.wg.Done()
	for {
		select {
		case <-c.ctx.Done():
			return
		case b := <-c.ackQueue:
			a, err := wire.DecodeAck(b)
			if err != nil {
				c.log.Warn("ack dropped", zap.Error(err))
				continue
			}
			if a.Rejected != "" {
				c.reject(&RejectedError{ResultID: a.ResultID, Reason: a.Rejected})
				continue
			}
			if err := c.opts.Spool.Remove(a.ResultID); err != nil {
				c.log.Error("spool remove", zap.String("result_id", a.ResultID), zap.Error(err))
				continue
			}
			c.done(a.ResultID, nil)
			c.log.Debug("result acknowledged", zap.String("result_id", a.ResultID))
		}
	}
}

// keptRejections is how many rejections a Client remembers for the
// WaitAck calls that come after the collector's answer.
const keptRejections = 64

// rejection is the rejection of result id, if it is among the last ones.
func (c *Client) rejection(id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rej := range c.rejections {
		if rej.ResultID == id {
			return rej
		}
	}
	return nil
}

// reject moves a result that can never be delivered to the spool's
// rejected/ folder and ends its waits with rej.
func (c *Client) reject(rej *RejectedError) {
	c.log.Warn("result set aside in the spool's rejected/ folder, never to be sent", zap.String("result_id", rej.ResultID),
		zap.String("reason", rej.Reason), zap.Int64("rejected", c.opts.Spool.Stats().Rejected+1))
	// Noted before the result leaves the spool: a WaitAck that finds it
	// gone finds its rejection.
	c.mu.Lock()
	if len(c.rejections) == keptRejections {
		c.rejections = c.rejections[1:]
	}
	c.rejections = append(c.rejections, rej)
	c.mu.Unlock()
	if err := c.opts.Spool.Reject(rej.ResultID); err != nil {
		c.log.Error("spool reject", zap.String("result_id", rej.ResultID), zap.Error(err))
		return
	}
	c.done(rej.ResultID, rej)
}

// done ends the waits for result id, which has left the spool (or
// memory), with err.
func (c *Client) done(id string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.lastSent, id)
	delete(c.kept, id)
	for _, w := range c.waiters[id] {
		if err != nil {
			w <- err
		}
		close(w)
	}
	delete(c.waiters, id)
}
