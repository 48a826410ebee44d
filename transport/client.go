package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/eclipse/paho.mqtt.golang/packets"
	"go.uber.org/zap"

	"github.com/edgebench/edgebench/wire"
)

// Handler handles one message. It runs on one of the client's workers,
// never on paho's goroutines; ctx ends when the client closes.
type Handler func(ctx context.Context, topic string, payload []byte)

// ErrNotConnected is returned by publishes while the broker is away.
var ErrNotConnected = errors.New("not connected to the broker")

// ErrClosed is returned once Close has been called.
var ErrClosed = errors.New("client closed")

// Client is a connection to the broker that survives the broker: paho
// reconnects with CleanSession=false and a stable client id, and on every
// connect the client restores its subscriptions, publishes its birth and
// replays its spool. Messages are handed from paho's goroutines to a
// bounded queue served by the client's workers. Close stops everything it
// started and waits for it.
type Client struct {
	cfg    ClientConfig
	opts   Options
	log    *zap.Logger
	topics wire.Topics
	pc     mqtt.Client

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	closed atomic.Bool

	queue     chan delivery
	ackQueue  chan []byte
	connected chan struct{} // a new connection; the session goroutine acts on it
	dropped   atomic.Int64
	panics    atomic.Int64

	mu      sync.Mutex
	subs    map[string]subscription // by filter
	waiters map[string][]chan error // closed by the ack; a rejection is sent first
	// The last rejections (at most keptRejections), oldest first, for a
	// WaitAck that comes after the collector's answer.
	rejections []*RejectedError
	lastSent   map[string]time.Time
	outbox     [][]byte          // events not yet sent, oldest first; at most outboxCap
	lostEvts   int64             // events dropped from a full outbox
	kept       map[string][]byte // results the spool refused, held until acked; at most keptCap

	tls     *tls.Config  // nil for a plain tcp:// broker
	skipped atomic.Int64 // packets over MaxPacketSize skipped

	failMu   sync.Mutex
	failures int    // connection attempts failed since the last connect
	failWhy  string // the last one's reason
	failErr  error  // the last one's error, nil once connected

	instance      string        // names this client in its collector status
	collectorSeen string        // the last collector status seen: its instance and conn_seq
	collectorUp   chan struct{} // a new collector status: resend what is held
	reannounce    chan struct{} // another collector left: announce this one again

	seq      atomic.Uint64 // conn_seq of the latest connection attempt
	willBuf  []byte        // backs the Last Will payload paho holds; rewritten in place per attempt
	willLen  int
	online   atomic.Bool
	restored atomic.Bool // online, and this connection's subscriptions are back
	flushMu  sync.Mutex  // one event flush at a time
}

type subscription struct {
	qos byte
	h   Handler
}

type delivery struct {
	h       Handler
	topic   string
	payload []byte
}

// Dial checks cfg, builds the paho client and starts connecting in the
// background: it returns at once, also when the broker is down (paho keeps
// trying; see WaitConnected). Errors are configuration errors only.
func Dial(cfg ClientConfig, opts Options) (*Client, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	device := opts.Birth != nil || opts.Spool != nil
	if device && cfg.Device == "" {
		return nil, fmt.Errorf("mqtt client: a device id is needed for a birth or a spool")
	}
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	if opts.ResendInterval <= 0 {
		opts.ResendInterval = time.Minute
	}
	if opts.QueueLen <= 0 {
		opts.QueueLen = 64
	}
	if opts.Workers <= 0 {
		opts.Workers = 1
	}
	tlsCfg, err := cfg.tlsConfig()
	if err != nil {
		return nil, err
	}
	c := &Client{
		cfg: cfg, opts: opts, log: opts.Log.With(zap.String("client_id", cfg.ClientID)), tls: tlsCfg,
		topics:      wire.Topics{Prefix: cfg.Prefix},
		queue:       make(chan delivery, opts.QueueLen),
		ackQueue:    make(chan []byte, 64),
		connected:   make(chan struct{}, 1),
		collectorUp: make(chan struct{}, 1),
		reannounce:  make(chan struct{}, 1),
		instance:    wire.NewID(),
		subs:        map[string]subscription{},
		waiters:     map[string][]chan error{},
		lastSent:    map[string]time.Time{},
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	// conn_seq grows across connections and restarts: it starts at the
	// time in ms (above 2^32, so its encoding has a fixed width).
	c.seq.Store(max(uint64(time.Now().UnixMilli()), 1<<32))

	mo := mqtt.NewClientOptions().
		AddBroker(cfg.Broker).
		SetClientID(cfg.ClientID).
		SetUsername(cfg.Username).
		SetPassword(cfg.Password).
		SetCleanSession(cfg.CleanSession).
		SetStore(newCopyStore()).
		SetResumeSubs(true).
		SetOrderMatters(false).
		SetAutoReconnect(true).
		SetConnectRetry(true).
		SetConnectRetryInterval(cfg.RetryInterval).
		SetMaxReconnectInterval(cfg.MaxRetryWait).
		SetKeepAlive(cfg.KeepAlive).
		SetPingTimeout(cfg.ConnectTimeout).
		SetConnectTimeout(cfg.ConnectTimeout).
		SetWriteTimeout(cfg.ConnectTimeout).
		SetOnConnectHandler(c.onConnect).
		SetConnectionLostHandler(c.onLost).
		SetConnectionAttemptHandler(c.onAttempt).
		SetConnectionNotificationHandler(c.onNotification).
		SetCustomOpenConnectionFn(c.dial).
		SetProtocolVersion(4). // no silent fallback to 3.1, whose refusal would hide the first one's reason
		SetDefaultPublishHandler(func(_ mqtt.Client, m mqtt.Message) {
			c.log.Debug("message without a route", zap.String("topic", m.Topic()))
		})
	if opts.Birth != nil {
		if err := c.setWill(mo); err != nil {
			return nil, err
		}
	}
	if opts.AnnounceCollector {
		if err := c.watchCollectors(mo); err != nil {
			return nil, err
		}
	}
	if opts.Spool != nil {
		if err := c.watchAcks(); err != nil {
			return nil, err
		}
	}
	c.pc = mqtt.NewClient(mo)
	// Routes first, so that messages the broker kept for this session are
	// routed when they arrive right after CONNACK.
	for topic := range c.subs {
		c.pc.AddRoute(topic, c.route(topic))
	}
	c.wg.Add(1 + opts.Workers)
	go c.session()
	for range opts.Workers {
		go c.worker()
	}
	c.pc.Connect() // with ConnectRetry it keeps trying until Disconnect
	return c, nil
}

// Topics returns the client's topic builder.
func (c *Client) Topics() wire.Topics { return c.topics }

// Config returns the configuration with its defaults filled in.
func (c *Client) Config() ClientConfig { return c.cfg }

// Connected reports whether the client is connected now.
func (c *Client) Connected() bool { return c.online.Load() }

// Dropped is the number of messages dropped because the handler queue was
// full.
func (c *Client) Dropped() int64 { return c.dropped.Load() }

// Panics is the number of messages whose handler panicked (and that were
// dropped).
func (c *Client) Panics() int64 { return c.panics.Load() }

// WaitConnected waits until the client is connected, with its
// subscriptions restored (and, for a collector's, its status announced),
// or ctx ends.
func (c *Client) WaitConnected(ctx context.Context) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for !c.restored.Load() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("connect to %s: %w", c.cfg.Broker, ctx.Err())
		case <-c.ctx.Done():
			return ErrClosed
		case <-t.C:
		}
	}
	return nil
}

// Subscribe routes messages matching filter to h, and subscribes now if
// connected and again on every connect.
func (c *Client) Subscribe(filter string, qos byte, h Handler) error {
	if c.closed.Load() {
		return ErrClosed
	}
	if h == nil {
		return fmt.Errorf("subscribe %s: no handler", filter)
	}
	c.mu.Lock()
	c.subs[filter] = subscription{qos: qos, h: h}
	c.mu.Unlock()
	c.pc.AddRoute(filter, c.route(filter))
	if !c.pc.IsConnectionOpen() {
		return nil // the next connect subscribes
	}
	return c.subscribe(c.ctx, filter, qos)
}

// subscribe subscribes and checks the broker's answer: a SUBACK can
// refuse a filter (0x80), which paho reports as success. mochi refuses a
// SUBSCRIBE whose packet id is that of a message it has in flight to the
// client (it keeps the two directions' ids in one table), so a refusal is
// tried again, a few times, with paho's next id.
func (c *Client) subscribe(ctx context.Context, filter string, qos byte) error {
	const attempts = 8
	for i := 1; ; i++ {
		tok := c.pc.Subscribe(filter, qos, nil)
		if err := wait(ctx, tok, c.cfg.ConnectTimeout); err != nil {
			return fmt.Errorf("subscribe %s: %w", filter, err)
		}
		// One filter, one code (paho keys it by the filter without a
		// $share/GROUP/ prefix).
		code := byte(0x80)
		for _, rc := range tok.(*mqtt.SubscribeToken).Result() {
			code = rc
		}
		if code < 0x80 {
			return nil
		}
		if i == attempts {
			return fmt.Errorf("subscribe %s: the broker refused it %d times (code %#x)", filter, attempts, code)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("subscribe %s: %w", filter, ctx.Err())
		case <-time.After(time.Duration(i) * 10 * time.Millisecond):
		}
	}
}

// route is the paho callback of one filter: it only queues the message.
func (c *Client) route(filter string) mqtt.MessageHandler {
	return func(_ mqtt.Client, m mqtt.Message) {
		c.mu.Lock()
		sub := c.subs[filter]
		c.mu.Unlock()
		// paho runs this on a goroutine of its own per message and sends
		// the PUBACK when it returns. A QoS 1 message waits for room in
		// the queue: its PUBACK waits too, and the broker's in-flight
		// window holds the rest back. A QoS 0 message that finds the queue
		// full is dropped and counted.
		var ok bool
		switch {
		case filter == c.topics.CollectorStatus() && sub.h == nil && c.opts.AnnounceCollector:
			c.onPeerStatus(m.Payload(), m.Retained())
			return
		case filter == c.topics.CollectorStatus() && sub.h == nil:
			c.onCollectorStatus(m.Payload(), m.Retained())
			return
		case sub.h == nil: // the spool's ack topic
			ok = enqueue(c.ctx, c.ackQueue, m.Payload(), m.Qos() > 0)
		default:
			ok = enqueue(c.ctx, c.queue, delivery{h: sub.h, topic: m.Topic(), payload: m.Payload()}, m.Qos() > 0)
		}
		if !ok {
			if n := c.dropped.Add(1); n&(n-1) == 0 { // log the 1st, 2nd, 4th, ...
				c.log.Warn("handler queue full, message dropped", zap.String("topic", m.Topic()), zap.Int64("dropped", n))
			}
		}
	}
}

// enqueue puts v on q, waiting for room (until Close) when wait is set.
func enqueue[T any](ctx context.Context, q chan T, v T, wait bool) bool {
	select {
	case q <- v:
		return true
	default:
	}
	if !wait {
		return false
	}
	select {
	case q <- v:
		return true
	case <-ctx.Done():
		return false
	}
}

// Publish sends payload to topic and, for QoS 1, waits for the broker's
// PUBACK (or ctx). It fails with ErrNotConnected while disconnected.
func (c *Client) Publish(ctx context.Context, topic string, qos byte, retained bool, payload []byte) error {
	if c.closed.Load() {
		return ErrClosed
	}
	if !c.pc.IsConnectionOpen() {
		return fmt.Errorf("publish %s: %w", topic, ErrNotConnected)
	}
	if err := wait(ctx, c.pc.Publish(topic, qos, retained, payload), c.cfg.ConnectTimeout); err != nil {
		return fmt.Errorf("publish %s: %w", topic, err)
	}
	return nil
}

func (c *Client) worker() {
	defer c.wg.Done()
	for {
		select {
		case <-c.ctx.Done():
			return
		case d := <-c.queue:
			c.handle(d)
		}
	}
}

// handle runs a message's handler. A panic in it drops that message: it is
// logged (the 1st, 2nd, 4th, ... time) and counted, and the worker goes on.
func (c *Client) handle(d delivery) {
	defer func() {
		if v := recover(); v != nil {
			if n := c.panics.Add(1); n&(n-1) == 0 {
				c.log.Error("message handler panicked, message dropped", zap.String("topic", d.topic),
					zap.Int("bytes", len(d.payload)), zap.Any("panic", v), zap.Int64("panics", n), zap.Stack("stack"))
			}
		}
	}()
	d.h(c.ctx, d.topic, d.payload)
}

// session does the work of each new connection and the periodic resend.
func (c *Client) session() {
	defer c.wg.Done()
	tick := time.NewTicker(c.opts.ResendInterval)
	defer tick.Stop()
	// After a collector's announcement the held results go again at once,
	// and again after 2 s, 4 s, ... while some are still unacknowledged:
	// the first resend or its ack can be lost with the collector that
	// left (a broker may hand it to the gone member of the group).
	again := time.NewTimer(time.Hour)
	again.Stop()
	defer again.Stop()
	var backoff time.Duration
	resendHeld := func() {
		c.mu.Lock()
		clear(c.lastSent)
		c.mu.Unlock()
		n := len(c.pending())
		if n == 0 {
			backoff = 0
			return
		}
		c.log.Info("a collector is online: sending the results held again", zap.Int("results", n))
		c.replay(0)
		if backoff = max(2*backoff, 2*time.Second); backoff < c.opts.ResendInterval {
			again.Reset(backoff)
		}
	}
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-c.connected:
			c.restore(c.seq.Load())
		case <-tick.C:
			if c.online.Load() {
				c.replay(c.opts.ResendInterval)
			}
		case <-c.reannounce:
			if c.restored.Load() {
				c.log.Info("another collector left: announcing this one again")
				c.announceCollector(c.seq.Add(1))
			}
		case <-c.collectorUp:
			if c.online.Load() {
				backoff = 0
				resendHeld()
			}
		case <-again.C:
			if c.online.Load() {
				resendHeld()
			}
		}
	}
}

// restore runs after each connect: subscriptions, birth, spool.
func (c *Client) restore(seq uint64) {
	c.mu.Lock()
	subs := make(map[string]byte, len(c.subs))
	for f, s := range c.subs {
		subs[f] = s.qos
	}
	c.mu.Unlock()
	for f, qos := range subs {
		if err := c.subscribe(c.ctx, f, qos); err != nil {
			c.log.Warn("resubscribe", zap.Error(err))
		}
	}
	if c.opts.Birth != nil {
		c.publishBirth(seq)
	}
	if c.opts.AnnounceCollector {
		c.announceCollector(seq)
	}
	// From now on PublishResult sends at once: after the subscription to
	// the collector status, whose retained copy, if any, is of a
	// collector already subscribed to results. What it spooled before is
	// sent by the replay below.
	c.restored.Store(c.online.Load())
	c.flushEvents()
	c.log.Info("connected", zap.String("broker", c.cfg.Broker), zap.Uint64("conn_seq", seq))
	if c.opts.OnConnect != nil {
		c.opts.OnConnect()
	}
	c.replay(0)
}

func (c *Client) onConnect(mqtt.Client) {
	c.failMu.Lock()
	if c.failures > 0 {
		c.log.Info("connected after failed attempts", zap.String("broker", c.cfg.Broker), zap.Int("attempts", c.failures))
	}
	c.failures, c.failWhy, c.failErr = 0, "", nil
	c.failMu.Unlock()
	// What was sent on earlier connections is sent again by the replay
	// that follows; what this one sends from now on is not.
	c.mu.Lock()
	clear(c.lastSent)
	c.mu.Unlock()
	c.restored.Store(false)
	c.online.Store(true)
	select {
	case c.connected <- struct{}{}:
	default:
		// A restore is pending already; it will do, and takes the
		// conn_seq current when it runs.
	}
}

// onNotification logs each failed connection attempt with the broker's
// address and reason: the first, each change of reason, then the 2nd, 4th,
// 8th... of a run of the same, so that a device left with a wrong password
// says why it never shows up without filling its log.
func (c *Client) onNotification(_ mqtt.Client, n mqtt.ConnectionNotification) {
	f, ok := n.(mqtt.ConnectionNotificationFailed)
	if !ok {
		return
	}
	err := connectError(c.cfg.Broker, f.Reason)
	why := strings.TrimPrefix(err.Error(), "broker "+c.cfg.Broker+": ")
	c.failMu.Lock()
	c.failures++
	count, changed := c.failures, why != c.failWhy
	c.failWhy, c.failErr = why, err
	c.failMu.Unlock()
	if changed || count&(count-1) == 0 {
		c.log.Warn("cannot connect to the broker; retrying", zap.String("broker", c.cfg.Broker), zap.String("reason", why),
			zap.Int("attempts", count))
	}
}

// connectError says why an attempt to connect to broker failed, in a
// user's words; a refused login wraps ErrLoginRefused.
func connectError(broker string, err error) error {
	var why string
	switch {
	case errors.Is(err, packets.ErrorRefusedBadUsernameOrPassword):
		return fmt.Errorf("broker %s: %w: bad user name or password", broker, ErrLoginRefused)
	case errors.Is(err, packets.ErrorRefusedNotAuthorised):
		return fmt.Errorf("broker %s: %w: not authorised", broker, ErrLoginRefused)
	case errors.Is(err, packets.ErrorRefusedIDRejected):
		return fmt.Errorf("broker %s: %w: client id rejected", broker, ErrLoginRefused)
	case errors.Is(err, packets.ErrorRefusedServerUnavailable):
		why = "the broker is unavailable"
	case errors.Is(err, packets.ErrorRefusedBadProtocolVersion):
		why = "the broker does not speak MQTT 3.1.1"
	case errors.Is(err, packets.ErrorNetworkError):
		why = "not reachable: " + strings.TrimPrefix(err.Error(), packets.ErrorNetworkError.Error()+" : ")
	default:
		why = err.Error()
	}
	return fmt.Errorf("broker %s: %s", broker, why)
}

// ConnectError is why the last attempt to connect failed, nil once
// connected; a refused login wraps ErrLoginRefused.
func (c *Client) ConnectError() error {
	c.failMu.Lock()
	defer c.failMu.Unlock()
	return c.failErr
}

func (c *Client) onLost(_ mqtt.Client, err error) {
	c.online.Store(false)
	c.restored.Store(false)
	c.log.Warn("connection lost", zap.String("broker", c.cfg.Broker), zap.Error(err))
}

// Close publishes the device's offline status if connected, disconnects,
// stops the client's goroutines and waits for them.
func (c *Client) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	c.cancel()
	c.wg.Wait()
	if c.opts.Birth != nil && c.pc.IsConnectionOpen() {
		c.publishOffline()
	}
	if c.opts.AnnounceCollector && c.pc.IsConnectionOpen() {
		c.collectorOffline()
	}
	c.pc.Disconnect(250)
	c.online.Store(false)
	c.restored.Store(false)
	return nil
}

// wait waits for a paho token, ctx or the timeout.
func wait(ctx context.Context, tok mqtt.Token, timeout time.Duration) error {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-tok.Done():
		return tok.Error()
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("no answer from the broker in %v", timeout)
	}
}
