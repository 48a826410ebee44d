package transport

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/url"
	"strconv"
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

// The collectors' presence: each collector announces its connections on
// the collectors' status topic (retained, with a Last Will), the devices
// resend what they hold when a new one appears, and the collectors of a
// share group announce themselves again when one of them leaves.

// onCollectorStatus has the session send every held result again when a
// collector announces a connection not seen before, while this client is
// subscribed. A retained copy that comes with the client's own subscribe
// (retained set) is of a collector subscribed before this client's
// connect, which the connect's own replay reaches: it is only noted.
func (c *Client) onCollectorStatus(b []byte, retained bool) {
	if len(b) == 0 { // a cleared retained message
		return
	}
	st, err := wire.DecodeStatus(b)
	if err != nil || st.State != wire.StatusOnline {
		return
	}
	seen := st.BootID + "/" + strconv.FormatUint(st.ConnSeq, 10)
	c.mu.Lock()
	fresh := seen != c.collectorSeen
	c.collectorSeen = seen
	c.mu.Unlock()
	if fresh && !retained {
		select {
		case c.collectorUp <- struct{}{}:
		default:
		}
	}
}

// watchCollectors sets a collector's Last Will, its status lost, and
// subscribes it to the collectors' status, where it watches the others.
func (c *Client) watchCollectors(mo *mqtt.ClientOptions) error {
	will := c.collectorStatus(wire.StatusLost, 0)
	b, err := will.MarshalMsg(nil)
	if err != nil {
		return fmt.Errorf("mqtt client: will: %w", err)
	}
	mo.SetBinaryWill(c.topics.CollectorStatus(), b, 1, true)
	c.subs[c.topics.CollectorStatus()] = subscription{qos: 1} // routed to onPeerStatus
	return nil
}

// onPeerStatus has a collector's client announce itself again when
// another collector's status says it is gone (its Last Will, or its
// Close): the devices then send again the results they hold, which the
// one that left may have taken without acknowledging. A retained copy
// that comes with the subscription is of a collector gone before this
// one's own announcement, which the devices heard.
func (c *Client) onPeerStatus(b []byte, retained bool) {
	if len(b) == 0 || retained {
		return
	}
	st, err := wire.DecodeStatus(b)
	if err != nil || st.State == wire.StatusOnline || st.BootID == c.instance {
		return
	}
	select {
	case c.reannounce <- struct{}{}:
	default:
	}
}

// collectorStatus is this collector's status on the collectors' topic.
func (c *Client) collectorStatus(state wire.StatusState, seq uint64) wire.Status {
	return wire.Status{V: wire.SchemaVersion, State: state, BootID: c.instance, ConnSeq: seq}
}

// collectorOffline publishes, at Close, that this collector is gone.
func (c *Client) collectorOffline() {
	st := c.collectorStatus(wire.StatusOffline, c.seq.Load())
	st.At = time.Now().UTC()
	if b, err := st.MarshalMsg(nil); err == nil {
		wait(context.Background(), c.pc.Publish(c.topics.CollectorStatus(), 1, true, b), 2*time.Second)
	}
}

// announceCollector publishes the collector's retained status for
// connection seq (or, when another collector left, a new number), on
// which every device sends the results it holds again.
func (c *Client) announceCollector(seq uint64) {
	st := c.collectorStatus(wire.StatusOnline, seq)
	st.At = time.Now().UTC()
	if b, err := st.MarshalMsg(nil); err == nil {
		if err := c.Publish(c.ctx, c.topics.CollectorStatus(), 1, true, b); err != nil {
			c.log.Warn("collector status", zap.Error(err))
		}
	}
}
