package transport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/eclipse/paho.mqtt.golang/packets"
	"go.uber.org/zap"

	"github.com/edgebench/edgebench/spool"
	"github.com/edgebench/edgebench/wire"
)

// ClientConfig says where and as whom to connect.
type ClientConfig struct {
	Broker   string // tcp://host:1883, ssl:// or mqtts://host:8883
	ClientID string // stable across restarts; default edgebench-<fleet>-<device>
	Username string
	Password string
	CAFile   string // PEM CA bundle for a TLS broker; default the system roots
	CertFile string // optional client certificate (PEM) ...
	KeyFile  string // ... and its key

	Prefix string // topic prefix; default wire.DefaultPrefix
	Fleet  string
	Device string // a device's own id; empty for a collector

	KeepAlive      time.Duration // default 30 s
	ConnectTimeout time.Duration // one connection attempt; default 10 s
	RetryInterval  time.Duration // first wait between attempts; default 5 s
	MaxRetryWait   time.Duration // longest wait between reconnects; default 1 min
	MaxPayload     int           // size cap on decoded messages; default wire.DefaultMaxPayload
}

// Options are what a Client does besides connecting.
type Options struct {
	Log *zap.Logger // default a no-op logger

	// Birth, when set, makes the client a device's presence: on every
	// connect it publishes Birth (State online, the connection's ConnSeq,
	// the time) retained on the status topic, and the Last Will of that
	// connection is the same status with State lost. Close publishes
	// offline. V, State, ConnSeq and At are filled in.
	Birth *wire.Status

	// Spool, when set, holds results until the collector acks them; it is
	// replayed on every connect and every ResendInterval.
	Spool          *spool.Spool
	ResendInterval time.Duration // default 1 min

	// OnConnect is called after every connect, once subscriptions are
	// restored and the birth is published, on the client's own goroutine.
	OnConnect func()

	// AnnounceCollector makes the client a collector's: after every
	// connect, once its subscriptions are restored, it publishes the
	// retained collector status (Topics.CollectorStatus). A client with a
	// Spool watches that status and, each time a collector announces a
	// new connection, sends every result it holds again: what it sent
	// while the collector was not subscribed (after a broker restart
	// without persistence) was lost.
	AnnounceCollector bool

	QueueLen int // messages waiting for the handlers; default 64; beyond it QoS 1 messages wait (and so their PUBACKs), QoS 0 ones are dropped and counted
	Workers  int // goroutines running handlers; default 1
}

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

	mu       sync.Mutex
	subs     map[string]subscription // by filter
	waiters  map[string][]chan error // closed by the ack; a rejection is sent first
	lastSent map[string]time.Time
	outbox   [][]byte          // events not yet sent, oldest first; at most outboxCap
	lostEvts int64             // events dropped from a full outbox
	kept     map[string][]byte // results the spool refused, held until acked; at most keptCap

	tls     *tls.Config  // nil for a plain tcp:// broker
	skipped atomic.Int64 // packets over MaxPacketSize skipped

	failMu   sync.Mutex
	failures int    // connection attempts failed since the last connect
	failWhy  string // the last one's reason
	failErr  error  // the last one's error, nil once connected

	instance      string        // names this client in its collector status
	collectorSeen string        // the last collector status seen: its instance and conn_seq
	collectorUp   chan struct{} // a new collector status: resend what is held

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

// DeviceClientID is the MQTT client id of a device's agent, the default
// of ClientConfig.ClientID.
func DeviceClientID(fleet, device string) string { return "edgebench-" + fleet + "-" + device }

// RunClientID is the client id `edgebench run --publish` connects with as
// the device: not the agent's, whose session it would take over, and with
// a "/" no id holds, so it is no other device's either. The collector's
// broker lets a device's account use both.
func RunClientID(fleet, device string) string { return DeviceClientID(fleet, device) + "/run" }

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
		SetCleanSession(false).
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
		topic, err := c.topics.Topic(cfg.Fleet, cfg.Device, wire.TopicStatus)
		if err != nil {
			return nil, fmt.Errorf("mqtt client: %w", err)
		}
		will := c.will(c.seq.Load())
		b, err := will.MarshalMsg(nil)
		if err != nil {
			return nil, fmt.Errorf("mqtt client: will: %w", err)
		}
		c.willLen = len(b)
		c.willBuf = make([]byte, len(b), 2*will.Msgsize())
		copy(c.willBuf, b)
		mo.SetBinaryWill(topic, c.willBuf[:c.willLen], 1, true)
	}
	if opts.Spool != nil {
		topic, err := c.topics.Topic(cfg.Fleet, cfg.Device, wire.TopicAck)
		if err != nil {
			return nil, fmt.Errorf("mqtt client: %w", err)
		}
		c.subs[topic] = subscription{qos: 1}
		c.subs[c.topics.CollectorStatus()] = subscription{qos: 1} // routed to onCollectorStatus
		c.wg.Add(1)
		go c.acker()
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

func (cfg *ClientConfig) fill() error {
	u, err := url.Parse(cfg.Broker)
	if err != nil || u.Host == "" {
		return fmt.Errorf("mqtt client: broker %q: want tcp://host:port, ssl:// or mqtts://", cfg.Broker)
	}
	switch u.Scheme {
	case "tcp", "mqtt":
		if cfg.CAFile != "" || cfg.CertFile != "" {
			return fmt.Errorf("mqtt client: TLS files given but broker %q is not ssl:// or mqtts://", cfg.Broker)
		}
	case "ssl", "tls", "mqtts", "tcps":
	default:
		return fmt.Errorf("mqtt client: broker %q: scheme %q not supported", cfg.Broker, u.Scheme)
	}
	if (cfg.CertFile == "") != (cfg.KeyFile == "") {
		return fmt.Errorf("mqtt client: a client certificate needs both a cert and a key file")
	}
	if cfg.Prefix == "" {
		cfg.Prefix = wire.DefaultPrefix
	}
	if err := wire.ValidPrefix(cfg.Prefix); err != nil {
		return fmt.Errorf("mqtt client: %w", err)
	}
	if cfg.Fleet != "" {
		if err := wire.ValidID(cfg.Fleet); err != nil {
			return fmt.Errorf("mqtt client: fleet: %w", err)
		}
	}
	if cfg.Device != "" {
		if err := wire.ValidID(cfg.Device); err != nil {
			return fmt.Errorf("mqtt client: device: %w", err)
		}
		if cfg.Fleet == "" {
			return fmt.Errorf("mqtt client: device %q needs a fleet", cfg.Device)
		}
	}
	if cfg.ClientID == "" {
		if cfg.Device == "" {
			return fmt.Errorf("mqtt client: a client id is needed without a device id")
		}
		cfg.ClientID = DeviceClientID(cfg.Fleet, cfg.Device)
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = 30 * time.Second
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	if cfg.RetryInterval <= 0 {
		cfg.RetryInterval = 5 * time.Second
	}
	if cfg.MaxRetryWait <= 0 {
		cfg.MaxRetryWait = time.Minute
	}
	if cfg.MaxPayload <= 0 {
		cfg.MaxPayload = wire.DefaultMaxPayload
	}
	return nil
}

func (cfg *ClientConfig) tlsConfig() (*tls.Config, error) {
	u, _ := url.Parse(cfg.Broker)
	if u.Scheme == "tcp" || u.Scheme == "mqtt" {
		return nil, nil
	}
	t := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: u.Hostname()}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("mqtt client: CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("mqtt client: CA %s: no PEM certificate in it", cfg.CAFile)
		}
		t.RootCAs = pool
	}
	if cfg.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("mqtt client: client certificate: %w", err)
		}
		t.Certificates = []tls.Certificate{cert}
	}
	return t, nil
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

func (c *Client) subscribe(ctx context.Context, filter string, qos byte) error {
	tok := c.pc.Subscribe(filter, qos, nil)
	if err := wait(ctx, tok, c.cfg.ConnectTimeout); err != nil {
		return fmt.Errorf("subscribe %s: %w", filter, err)
	}
	return nil
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
		return nil
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

// reject moves a result that can never be delivered to the spool's
// rejected/ folder and ends its waits with rej.
func (c *Client) reject(rej *RejectedError) {
	c.log.Warn("result set aside in the spool's rejected/ folder, never to be sent", zap.String("result_id", rej.ResultID),
		zap.String("reason", rej.Reason), zap.Int64("rejected", c.opts.Spool.Stats().Rejected+1))
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
		case <-c.collectorUp:
			if c.online.Load() {
				c.mu.Lock()
				clear(c.lastSent)
				c.mu.Unlock()
				if n := len(c.pending()); n > 0 {
					c.log.Info("a collector is online: sending the results held again", zap.Int("results", n))
				}
				c.replay(0)
			}
		}
	}
}

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
		st := *c.opts.Birth
		st.V, st.State, st.ConnSeq, st.At = wire.SchemaVersion, wire.StatusOnline, seq, time.Now().UTC()
		if err := c.publishStatus(&st); err != nil {
			c.log.Warn("birth", zap.Error(err))
		}
	}
	if c.opts.AnnounceCollector {
		st := wire.Status{V: wire.SchemaVersion, State: wire.StatusOnline, BootID: c.instance, ConnSeq: seq, At: time.Now().UTC()}
		if b, err := st.MarshalMsg(nil); err == nil {
			if err := c.Publish(c.ctx, c.topics.CollectorStatus(), 1, true, b); err != nil {
				c.log.Warn("collector status", zap.Error(err))
			}
		}
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

// skippedPacket counts and logs a packet over MaxPacketSize that was
// skipped unread.
func (c *Client) skippedPacket(size int) {
	n := c.skipped.Add(1)
	c.log.Warn("message over the size cap skipped", zap.Int("bytes", size), zap.Int("cap", MaxPacketSize), zap.Int64("skipped", n))
}

// Skipped is the number of messages skipped because they were over
// MaxPacketSize.
func (c *Client) Skipped() int64 { return c.skipped.Load() }

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
		st := *c.opts.Birth
		st.V, st.State, st.ConnSeq, st.At = wire.SchemaVersion, wire.StatusOffline, c.seq.Load(), time.Now().UTC()
		if b, err := st.MarshalMsg(nil); err == nil {
			topic, _ := c.topics.Topic(c.cfg.Fleet, c.cfg.Device, wire.TopicStatus)
			wait(context.Background(), c.pc.Publish(topic, 1, true, b), 2*time.Second)
		}
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
