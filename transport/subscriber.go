package transport

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/wire"
)

// ResultHandler stores one result. from is the topic's fleet and device,
// which the broker's ACL vouches for (the result's own Fleet and Device
// match it). A nil return means committed: only then is the ack sent. An
// error wrapping ErrRejected refuses the result for good: it is acked as
// rejected, and the device sets it aside. Any other error leaves it
// unacked, for the device to send again. The same result may arrive more
// than once; storing must be idempotent by ID.
// raw is the payload as it came, which the handler may keep: storing it,
// not r re-encoded, keeps the fields a newer sender added.
type ResultHandler func(ctx context.Context, from wire.Addr, r *wire.Result, raw []byte) error

// SubscriberConfig says which results a Subscriber takes.
type SubscriberConfig struct {
	Fleet   string // one fleet, or "+" (the default) for all
	Group   string // shared subscription group ($share/<group>/...), to split ingest among collectors
	Handler ResultHandler
	// Dropped, when set, is told of each result dropped as malformed
	// instead of a warning line each (the collector sums them: a device
	// may send thousands).
	Dropped func(msg string, fields ...zap.Field)
}

// ErrRejected, wrapped in a ResultHandler's error, refuses a result for
// good.
var ErrRejected = errors.New("result rejected")

// SubscriberStats count what a Subscriber has seen.
type SubscriberStats struct {
	Received  int64 // result messages
	Acked     int64 // stored and acknowledged
	Malformed int64 // undecodable or inconsistent with their topic, dropped
	Failed    int64 // the handler returned an error; not acked, the device sends again
	Rejected  int64 // acked as rejected: malformed with a readable id, or refused by the handler
}

// Subscriber is the collector's side of result delivery: it decodes each
// result, hands it to the handler and acknowledges it to the device only
// after the handler returned nil. Malformed payloads are logged and
// dropped; nothing stops the ingest.
type Subscriber struct {
	c   *Client
	cfg SubscriberConfig

	received, acked, malformed, failed, rejected atomic.Int64
}

// NewSubscriber subscribes c to the results of cfg.Fleet (on every
// connect). Handlers run on c's workers (Options.Workers).
func NewSubscriber(c *Client, cfg SubscriberConfig) (*Subscriber, error) {
	if cfg.Handler == nil {
		return nil, errors.New("result subscriber: no handler")
	}
	if cfg.Fleet == "" {
		cfg.Fleet = "+"
	}
	filter, err := c.topics.Filter(cfg.Fleet, "+", wire.TopicResult, cfg.Group)
	if err != nil {
		return nil, fmt.Errorf("result subscriber: %w", err)
	}
	s := &Subscriber{c: c, cfg: cfg}
	if err := c.Subscribe(filter, 1, s.handle); err != nil {
		return nil, fmt.Errorf("result subscriber: %w", err)
	}
	return s, nil
}

// Stats returns the subscriber's counts.
func (s *Subscriber) Stats() SubscriberStats {
	return SubscriberStats{Received: s.received.Load(), Acked: s.acked.Load(), Malformed: s.malformed.Load(), Failed: s.failed.Load(),
		Rejected: s.rejected.Load()}
}

func (s *Subscriber) handle(ctx context.Context, topic string, b []byte) {
	s.received.Add(1)
	log := s.c.log.With(zap.String("topic", topic))
	from, err := s.c.topics.Parse(topic)
	if err != nil || from.Kind != wire.TopicResult {
		s.malformed.Add(1)
		s.warn("result dropped: bad topic", zap.String("topic", wire.Clip(topic)), zap.Error(err))
		return
	}
	r, err := wire.DecodeResultMax(b, s.c.cfg.MaxPayload)
	if err != nil {
		s.malformed.Add(1)
		s.warn("result dropped", zap.String("topic", topic), zap.Int("bytes", len(b)), zap.Error(err))
		// A newer schema may be stored by a newer collector: not refused.
		if id := wire.PeekID(b); id != "" && !errors.Is(err, wire.ErrVersion) {
			s.ack(ctx, from, id, err.Error())
		}
		return
	}
	if r.Fleet != from.Fleet || r.Device != from.Device {
		s.malformed.Add(1)
		s.warn("result dropped: sender is not the result's device", zap.String("topic", topic),
			zap.String("result_id", r.ID), zap.String("fleet", r.Fleet), zap.String("device", r.Device))
		s.ack(ctx, from, r.ID, fmt.Sprintf("result of %s/%s sent by %s/%s", r.Fleet, r.Device, from.Fleet, from.Device))
		return
	}
	if err := s.cfg.Handler(ctx, from, r, b); err != nil {
		if errors.Is(err, ErrRejected) {
			// The handler logs its refusals (the collector sums them: a
			// device may send thousands).
			log.Debug("result rejected", zap.String("result_id", r.ID), zap.Error(err))
			s.ack(ctx, from, r.ID, strings.TrimSuffix(err.Error(), ": "+ErrRejected.Error()))
			return
		}
		s.failed.Add(1)
		log.Warn("result not stored, not acked", zap.String("result_id", r.ID), zap.Error(err))
		return
	}
	s.ack(ctx, from, r.ID, "")
}

func (s *Subscriber) warn(msg string, fields ...zap.Field) {
	if s.cfg.Dropped != nil {
		s.cfg.Dropped(msg, fields...)
		return
	}
	s.c.log.Warn(msg, fields...)
}

// ack acknowledges result id to the device that sent it: as stored, or as
// rejected for the given reason.
func (s *Subscriber) ack(ctx context.Context, from wire.Addr, id, rejected string) {
	ack, _ := (&wire.Ack{V: wire.SchemaVersion, ResultID: id, Rejected: rejected}).MarshalMsg(nil)
	ackTopic, err := s.c.topics.Topic(from.Fleet, from.Device, wire.TopicAck)
	if err == nil {
		err = s.c.Publish(ctx, ackTopic, 1, false, ack)
	}
	if err != nil {
		// The device sends the result again; the store is idempotent.
		s.c.log.Warn("ack not sent", zap.String("result_id", id), zap.Error(err))
		return
	}
	if rejected != "" {
		s.rejected.Add(1)
	} else {
		s.acked.Add(1)
	}
}
