package transport

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/url"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
	"go.uber.org/zap"

	"github.com/edgebench/edgebench/wire"
)

// This file is a device's presence: the retained birth of each
// connection and its Last Will (the same status, State lost, with the
// connection's conn_seq rewritten in place before each attempt), offline
// at Close, and the heartbeats between.

// DeviceClientID is the MQTT client id of a device's agent, the default
// of ClientConfig.ClientID.
func DeviceClientID(fleet, device string) string { return "edgebench-" + fleet + "-" + device }

// RunClientID is the client id `edgebench run --publish` connects with as
// the device: not the agent's, whose session it would take over, and with
// a "/" no id holds, so it is no other device's either. The collector's
// broker lets a device's account use both.
func RunClientID(fleet, device string) string { return DeviceClientID(fleet, device) + "/run" }

// setWill makes the Last Will of the client's connections its birth with
// State lost, in a buffer onAttempt rewrites for each attempt.
func (c *Client) setWill(mo *mqtt.ClientOptions) error {
	topic, err := c.topics.Topic(c.cfg.Fleet, c.cfg.Device, wire.TopicStatus)
	if err != nil {
		return fmt.Errorf("mqtt client: %w", err)
	}
	will := c.will(c.seq.Load())
	b, err := will.MarshalMsg(nil)
	if err != nil {
		return fmt.Errorf("mqtt client: will: %w", err)
	}
	c.willLen = len(b)
	c.willBuf = make([]byte, len(b), 2*will.Msgsize())
	copy(c.willBuf, b)
	mo.SetBinaryWill(topic, c.willBuf[:c.willLen], 1, true)
	return nil
}

func (c *Client) will(seq uint64) wire.Status {
	return wire.Status{V: wire.SchemaVersion, State: wire.StatusLost, BootID: c.opts.Birth.BootID, ConnSeq: seq}
}

// onAttempt runs on paho's connecting goroutine before each attempt: the
// attempt gets the next conn_seq, and the Last Will paho is about to send
// is rewritten in place to carry it (same length: conn_seq always takes 9
// bytes, and paho reads the payload after this returns).
func (c *Client) onAttempt(_ *url.URL, t *tls.Config) *tls.Config {
	seq := c.seq.Add(1)
	if c.opts.Birth != nil {
		w := c.will(seq)
		out, err := w.MarshalMsg(c.willBuf[:0])
		if err != nil || len(out) != c.willLen || &out[0] != &c.willBuf[0] {
			c.log.Error("last will not updated", zap.Uint64("conn_seq", seq), zap.Int("len", len(out)), zap.Error(err))
		}
	}
	return t
}

// publishBirth publishes the device's retained birth for connection seq.
func (c *Client) publishBirth(seq uint64) {
	st := *c.opts.Birth
	st.V, st.State, st.ConnSeq, st.At = wire.SchemaVersion, wire.StatusOnline, seq, time.Now().UTC()
	if err := c.publishStatus(&st); err != nil {
		c.log.Warn("birth", zap.Error(err))
	}
}

func (c *Client) publishStatus(st *wire.Status) error {
	topic, err := c.topics.Topic(c.cfg.Fleet, c.cfg.Device, wire.TopicStatus)
	if err != nil {
		return err
	}
	b, err := st.MarshalMsg(nil)
	if err != nil {
		return fmt.Errorf("encode status: %w", err)
	}
	return c.Publish(c.ctx, topic, 1, true, b)
}

// publishOffline publishes the device's retained offline status, at
// Close, waiting at most 2 s for the broker.
func (c *Client) publishOffline() {
	st := *c.opts.Birth
	st.V, st.State, st.ConnSeq, st.At = wire.SchemaVersion, wire.StatusOffline, c.seq.Load(), time.Now().UTC()
	if b, err := st.MarshalMsg(nil); err == nil {
		topic, _ := c.topics.Topic(c.cfg.Fleet, c.cfg.Device, wire.TopicStatus)
		wait(context.Background(), c.pc.Publish(topic, 1, true, b), 2*time.Second)
	}
}

// PublishHeartbeat sends a heartbeat (QoS 0) on the device's heartbeat
// topic, with the spool's counts (results waiting, results set aside as
// rejected) when the client has one.
func (c *Client) PublishHeartbeat(ctx context.Context, h *wire.Heartbeat) error {
	if c.opts.Spool != nil {
		st := c.opts.Spool.Stats()
		h.Spooled, h.Rejected = st.Count, st.Rejected
	}
	return c.publishOwn(ctx, wire.TopicHeartbeat, 0, h)
}

type marshaler interface{ MarshalMsg([]byte) ([]byte, error) }

func (c *Client) publishOwn(ctx context.Context, k wire.Kind, qos byte, m marshaler) error {
	topic, err := c.topics.Topic(c.cfg.Fleet, c.cfg.Device, k)
	if err != nil {
		return err
	}
	b, err := m.MarshalMsg(nil)
	if err != nil {
		return fmt.Errorf("encode %s: %w", k, err)
	}
	return c.Publish(ctx, topic, qos, false, b)
}
