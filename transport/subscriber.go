package transport

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"go.uber.org/zap"
)

// ResultHandler stores one result. from is the topic's fleet and device,
// which the broker's ACL vouches for (the result's own Fleet and Device
// match it). A nil return means committed: only then is the ack sent. The
// same result may arrive more than once; storing must be idempotent by ID.
// raw is the payload as it came, which the handler may keep: storing it,
// not r re-encoded, keeps the fields a newer sender added.
type ResultHandler func(ctx context.Context, from Addr, r *Result, raw []byte) error

// SubscriberConfig says which results a Subscriber takes.
type SubscriberConfig struct {
	Fleet   string // one fleet, or "+" (the default) for all
	Group   string // shared subscription group ($share/<group>/...), to split ingest among collectors
	Handler ResultHandler
}

// SubscriberStats count what a Subscriber has seen.
type SubscriberStats struct {
	Received  int64 // result messages
	Acked     int64 // stored and acknowledged
	Malformed int64 // undecodable or inconsistent with their topic, dropped
	Failed    int64 // the handler returned an error; not acked, the device sends again
}

// Subscriber is the collector's side of result delivery: it decodes each
// result, hands it to the handler and acknowledges it to the device only
// after the handler returned nil. Malformed payloads are logged and
// dropped; nothing stops the ingest.
type Subscriber struct {
	c   *Client
	cfg SubscriberConfig

	received, acked, malformed, failed atomic.Int64
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
	filter, err := c.topics.Filter(cfg.Fleet, "+", TopicResult, cfg.Group)
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
	return SubscriberStats{Received: s.received.Load(), Acked: s.acked.Load(), Malformed: s.malformed.Load(), Failed: s.failed.Load()}
}

func (s *Subscriber) handle(ctx context.Context, topic string, b []byte) {
	s.received.Add(1)
	log := s.c.log.With(zap.String("topic", topic))
	from, err := s.c.topics.Parse(topic)
	if err != nil || from.Kind != TopicResult {
		s.malformed.Add(1)
		log.Warn("result dropped: bad topic", zap.Error(err))
		return
	}
	r, err := DecodeResultMax(b, s.c.cfg.MaxPayload)
	if err != nil {
		s.malformed.Add(1)
		log.Warn("result dropped", zap.Int("bytes", len(b)), zap.Error(err))
		return
	}
	if r.Fleet != from.Fleet || r.Device != from.Device {
		s.malformed.Add(1)
		log.Warn("result dropped: sender is not the result's device",
			zap.String("result_id", r.ID), zap.String("fleet", r.Fleet), zap.String("device", r.Device))
		return
	}
	if err := s.cfg.Handler(ctx, from, r, b); err != nil {
		s.failed.Add(1)
		log.Warn("result not stored, not acked", zap.String("result_id", r.ID), zap.Error(err))
		return
	}
	ack, _ := (&Ack{V: SchemaVersion, ResultID: r.ID}).MarshalMsg(nil)
	ackTopic, err := s.c.topics.Topic(from.Fleet, from.Device, TopicAck)
	if err == nil {
		err = s.c.Publish(ctx, ackTopic, 1, false, ack)
	}
	if err != nil {
		// The device sends the result again; the store is idempotent.
		log.Warn("ack not sent", zap.String("result_id", r.ID), zap.Error(err))
		return
	}
	s.acked.Add(1)
}
