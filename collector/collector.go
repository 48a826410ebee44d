package collector

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/sign"
	"github.com/edgebench/edgebench/transport"
	"github.com/edgebench/edgebench/wire"
)

// Config configures a Collector. Zero values take the defaults.
type Config struct {
	DB     string // the store: a SQLite file or a postgres:// URL (see OpenStore); default ./edgebench.db
	Prefix string // topic prefix; default wire.DefaultPrefix

	// Embedded broker (the default): Listen is its address and Accounts
	// who may connect. The collector dials it with Accounts.Collector.
	Listen   string // default 127.0.0.1:1883
	Accounts *Accounts
	// TLS for the embedded broker's listener: its certificate and key
	// (PEM) and, to require client certificates, the CA that signs them.
	// The collector's own client then reaches the broker on a plain
	// loopback listener of its own (accounts still apply there).
	TLSCert, TLSKey, ClientCAFile string

	// External broker, instead of the embedded one: its URL and the
	// collector's login there. Share splits results, events and
	// heartbeats among the collectors of a group ($share/<Share>/...),
	// which then share one PostgreSQL store; each still reads every
	// device's retained status. A collector of a group keeps no session
	// at the broker once it disconnects, so that one gone for good holds
	// no share of the messages.
	Broker   string
	Username string
	Password string
	CAFile   string
	Share    string
	ClientID string // default edgebench-collector (plus the share group)

	Web string // web UI and API address; default 127.0.0.1:8080; "-" for none
	// WebHosts are the host names the web UI and API answer to besides IP
	// addresses, localhost and Web's own host (the Host header of other
	// requests is refused, against DNS rebinding): the names a browser or
	// a proxy in front uses to reach the collector.
	WebHosts []string
	// APIToken, when set, is required on every /api/ request as
	// "Authorization: Bearer TOKEN". A Web address that is not loopback
	// needs one: the API sends commands to the whole fleet.
	APIToken string

	// Signer, when set, signs every command for the topic it is sent on
	// (see wire.Command.SigningBytes); devices with the matching key
	// refuse unsigned commands.
	Signer sign.Signer

	// Keep, when set, is how long results (with their runs and samples),
	// commands and events are kept: older ones are pruned at start and
	// every hour.
	Keep time.Duration

	IngestWorkers int // results handled at once (each waits for its batch's commit, so this bounds a batch); default 256
	BatchMax      int // results per transaction; default 256
	// QueueLen is how many received messages may wait for a handler.
	// Past it, QoS 1 messages (results, events) wait in the broker, whose
	// in-flight window holds them back until there is room; QoS 0
	// heartbeats are dropped and counted. Default 8192.
	QueueLen int
	Log      *zap.Logger

	limits brokerLimits // the embedded broker's; tests shorten them
}

func (c *Config) fill() error {
	if c.DB == "" {
		c.DB = "edgebench.db"
	}
	if c.Prefix == "" {
		c.Prefix = wire.DefaultPrefix
	}
	if err := wire.ValidPrefix(c.Prefix); err != nil {
		return fmt.Errorf("collector: %w", err)
	}
	if (c.TLSCert == "") != (c.TLSKey == "") || (c.ClientCAFile != "" && c.TLSCert == "") {
		return errors.New("collector: broker TLS needs a certificate and its key (and a client CA only with them)")
	}
	if c.Broker != "" && c.TLSCert != "" {
		return errors.New("collector: broker TLS is for the embedded broker; an external broker has its own")
	}
	if c.Broker == "" {
		if c.Listen == "" {
			c.Listen = "127.0.0.1:1883"
		}
		if c.Accounts == nil {
			return errors.New("collector: the embedded broker needs accounts (--accounts FILE)")
		}
		if err := c.Accounts.check(); err != nil {
			return fmt.Errorf("collector: accounts: %w", err)
		}
		if c.Accounts.Collector.Password == "" {
			return errors.New("collector: the collector account needs a plain password to log in to its own broker")
		}
	}
	if c.Web == "" {
		c.Web = "127.0.0.1:8080"
	}
	if c.Web != "-" && c.APIToken == "" && !loopbackAddr(c.Web) {
		return fmt.Errorf("collector: web %s is not a loopback address: set an API token", c.Web)
	}
	for _, h := range c.WebHosts {
		if err := ValidWebHost(h); err != nil {
			return fmt.Errorf("collector: %w", err)
		}
	}
	if c.IngestWorkers <= 0 {
		c.IngestWorkers = 256
	}
	if c.BatchMax <= 0 {
		c.BatchMax = 256
	}
	if c.QueueLen <= 0 {
		c.QueueLen = 8192
	}
	c.limits.fill()
	if c.Log == nil {
		c.Log = zap.NewNop()
	}
	if c.ClientID == "" {
		c.ClientID = "edgebench-collector"
		if c.Share != "" {
			c.ClientID += "-" + c.Share + "-" + fmt.Sprint(os.Getpid())
		}
	}
	return nil
}

// Collector receives what the fleet publishes into a Store, sends
// commands and serves the web UI. Start it with Start; Close stops
// everything it started.
type Collector struct {
	cfg    Config
	log    *zap.Logger
	store  *Store
	broker *broker
	client *transport.Client
	sub    *transport.Subscriber
	web    *http.Server
	webLn  net.Listener

	ingest chan ingestReq
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	stored, duplicates, failed atomic.Int64
	panics                     atomic.Int64 // results the store panicked on

	downMu    sync.Mutex
	downSince time.Time // when the store became unavailable; zero while it is not

	hbMu      sync.Mutex
	heartbeat map[wire.Addr]*wire.Heartbeat // the latest of each device since the last flush
	hbAt      map[wire.Addr]time.Time       // the time of each device's latest heartbeat taken
}

// heartbeatFlush is how often the latest heartbeats are written, in one
// transaction.
const heartbeatFlush = time.Second

type ingestReq struct {
	in   Incoming
	done chan error // buffered 1
}

// Start opens the store, starts the embedded broker (unless an external
// one is configured), connects, subscribes and serves the web UI.
func Start(ctx context.Context, cfg Config) (*Collector, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	st, err := OpenStore(ctx, cfg.DB)
	if err != nil {
		return nil, err
	}
	c := &Collector{cfg: cfg, log: cfg.Log, store: st, ingest: make(chan ingestReq, cfg.IngestWorkers)}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	if err := c.start(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Collector) start() error {
	cfg := c.cfg
	broker, user, pass := cfg.Broker, cfg.Username, cfg.Password
	if broker == "" {
		tlsCfg, err := brokerTLS(cfg.TLSCert, cfg.TLSKey, cfg.ClientCAFile)
		if err != nil {
			return err
		}
		b, err := startBroker(cfg.Listen, tlsCfg, cfg.Accounts, cfg.Prefix, cfg.limits, c.log.Named("broker"))
		if err != nil {
			return err
		}
		c.broker = b
		broker = "tcp://" + b.own
		user, pass = cfg.Accounts.Collector.Username, cfg.Accounts.Collector.Password
	}
	c.wg.Add(2)
	go c.batcher()
	go c.heartbeats()
	if cfg.Keep > 0 {
		c.wg.Add(1)
		go c.retention()
	}

	cl, err := transport.Dial(transport.ClientConfig{
		Broker: broker, ClientID: cfg.ClientID, Username: user, Password: pass, CAFile: cfg.CAFile, Prefix: cfg.Prefix,
		RetryInterval: time.Second, MaxRetryWait: 10 * time.Second, CleanSession: cfg.Share != "",
	}, transport.Options{Log: c.log.Named("mqtt"), Workers: cfg.IngestWorkers, QueueLen: cfg.QueueLen,
		AnnounceCollector: true}) // devices resend what they hold once it has resubscribed
	if err != nil {
		return fmt.Errorf("collector: %w", err)
	}
	c.client = cl
	topics := wire.Topics{Prefix: cfg.Prefix}
	for _, s := range []struct {
		kind  wire.Kind
		qos   byte
		h     transport.Handler
		group string
	}{
		{wire.TopicStatus, 1, c.onStatus, ""}, // retained: every collector reads them all on connect
		{wire.TopicEvent, 1, c.onEvent, cfg.Share},
		{wire.TopicHeartbeat, 0, c.onHeartbeat, cfg.Share},
	} {
		filter, err := topics.Filter("+", "+", s.kind, s.group)
		if err != nil {
			return fmt.Errorf("collector: %w", err)
		}
		if err := cl.Subscribe(filter, s.qos, s.h); err != nil {
			return fmt.Errorf("collector: %w", err)
		}
	}
	sub, err := transport.NewSubscriber(cl, transport.SubscriberConfig{Group: cfg.Share, Handler: c.onResult})
	if err != nil {
		return fmt.Errorf("collector: %w", err)
	}
	c.sub = sub

	if cfg.Web != "-" {
		w, err := NewWeb(c.store, c.log.Named("web"))
		if err != nil {
			return err
		}
		mux := http.NewServeMux()
		mux.Handle("/", w)
		api := http.NewServeMux()
		c.api(api)
		mux.Handle("/api/", requireToken(cfg.APIToken, api))
		ln, err := net.Listen("tcp", cfg.Web)
		if err != nil {
			return fmt.Errorf("collector: web: %w", err)
		}
		c.webLn = ln
		// A page of another site open in a browser on this machine must
		// not be able to POST a trigger to 127.0.0.1.
		c.web = &http.Server{Handler: allowHosts(cfg.Web, cfg.WebHosts, http.NewCrossOriginProtection().Handler(mux)),
			ReadHeaderTimeout: 10 * time.Second}
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			if err := c.web.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				c.log.Error("web server", zap.Error(err))
			}
		}()
	}
	return nil
}

// loopbackAddr reports whether host:port names a loopback address.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ValidWebHost checks a name given for Config.WebHosts: a host name
// without scheme, port or path.
func ValidWebHost(name string) error {
	if name == "" || strings.ContainsAny(name, ":/[]@ ") {
		return fmt.Errorf("web host %q: want a host name such as bench.example.org, without scheme, port or path", name)
	}
	return nil
}

// allowHosts passes to h the requests whose Host header is an IP address,
// localhost, the host of the listen address or one of names, and answers
// 421 to the others. A page whose owner points its DNS name at 127.0.0.1
// (DNS rebinding) reaches the collector as the same origin, but with its
// own name as Host.
func allowHosts(listen string, names []string, h http.Handler) http.Handler {
	ok := map[string]bool{"localhost": true}
	if host, _, err := net.SplitHostPort(listen); err == nil && host != "" {
		ok[strings.ToLower(host)] = true
	}
	for _, n := range names {
		ok[strings.TrimSuffix(strings.ToLower(n), ".")] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if hp, _, err := net.SplitHostPort(host); err == nil {
			host = hp
		}
		host = strings.TrimSuffix(strings.ToLower(host), ".")
		if host == "" || ok[host] || net.ParseIP(strings.Trim(host, "[]")) != nil {
			h.ServeHTTP(w, r)
			return
		}
		host = wire.Clip(host)
		http.Error(w, fmt.Sprintf("misdirected request: this collector does not answer to the name %q "+
			"(start it with --web-host %s if that name is its own)", host, host), http.StatusMisdirectedRequest)
	})
}

// requireToken passes requests that carry "Authorization: Bearer token"
// to h, and answers 401 to the others; with no token it is h.
func requireToken(token string, h http.Handler) http.Handler {
	if token == "" {
		return h
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="edgebench"`)
			http.Error(w, "unauthorized: this collector's API needs its token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// WaitConnected waits until the collector is connected to its broker.
func (c *Collector) WaitConnected(ctx context.Context) error { return c.client.WaitConnected(ctx) }

// Store is the collector's store.
func (c *Collector) Store() *Store { return c.store }

// WebAddr is the address the web UI listens on ("" without one).
func (c *Collector) WebAddr() string {
	if c.webLn == nil {
		return ""
	}
	return c.webLn.Addr().String()
}

// Stats counts the results the collector took.
type Stats struct {
	Stored     int64 // new results committed
	Duplicates int64 // results already stored (resent by their device)
	Failed     int64 // results the store did not take; not acked, so resent
	// Panics counts the messages dropped because handling them panicked
	// (a bug): in a handler or in the store. The collector goes on.
	Panics int64
	transport.SubscriberStats
}

// Stats returns the collector's counts.
func (c *Collector) Stats() Stats {
	return Stats{Stored: c.stored.Load(), Duplicates: c.duplicates.Load(), Failed: c.failed.Load(),
		Panics: c.panics.Load() + c.client.Panics(), SubscriberStats: c.sub.Stats()}
}

// Close stops the web UI, the MQTT client, the ingest, the broker and the
// store, in that order, and waits for the goroutines.
func (c *Collector) Close() error {
	var errs []error
	if c.web != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		errs = append(errs, c.web.Shutdown(ctx))
		cancel()
	}
	if c.client != nil {
		errs = append(errs, c.client.Close())
	}
	c.cancel()
	c.wg.Wait()
	if c.broker != nil {
		errs = append(errs, c.broker.Close())
	}
	errs = append(errs, c.store.Close())
	return errors.Join(errs...)
}

// onResult hands a result, with the payload it came in, to the batcher
// and waits for its commit: the Subscriber acks it when this returns nil.
func (c *Collector) onResult(ctx context.Context, _ wire.Addr, r *wire.Result, raw []byte) error {
	req := ingestReq{in: Incoming{Result: r, Raw: raw}, done: make(chan error, 1)}
	req.in.prepare()
	select {
	case c.ingest <- req:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.ctx.Done():
		return c.ctx.Err()
	}
	select {
	case err := <-req.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// batcher commits results in batches: it takes what is waiting, up to
// BatchMax, in one transaction, so that many devices' results share one
// fsync, and answers each handler after the commit.
func (c *Collector) batcher() {
	defer c.wg.Done()
	batch := make([]ingestReq, 0, c.cfg.BatchMax)
	in := make([]Incoming, 0, c.cfg.BatchMax)
	for {
		batch, in = batch[:0], in[:0]
		select {
		case r := <-c.ingest:
			batch = append(batch, r)
		case <-c.ctx.Done():
			return
		}
	fill:
		for len(batch) < c.cfg.BatchMax {
			select {
			case r := <-c.ingest:
				batch = append(batch, r)
			default:
				break fill
			}
		}
		for _, r := range batch {
			in = append(in, r.in)
		}
		c.commit(batch, in)
	}
}

// commit stores a batch and answers each of its handlers. While the store
// is unavailable (a PostgreSQL restart) it tries again, holding the batch
// and the handlers. Should the store fail otherwise, or panic (a bug, or
// data the decoder should not have let through), the batch is stored
// again one result at a time, so that only the result it fails or panics
// on fails: that one is logged, counted and not acked, and the ingest goes
// on.
func (c *Collector) commit(batch []ingestReq, in []Incoming) {
	var fresh []bool
	err := c.whileUnavailable(c.ctx, func() (err error) {
		fresh, err = c.ingestRecover(in)
		return err
	})
	var p *panicError
	if err != nil && len(batch) > 1 && c.ctx.Err() == nil && !Unavailable(err) {
		c.log.Debug("ingest failed: storing the batch one result at a time", zap.Int("results", len(batch)), zap.Error(err))
		for i := range batch {
			c.commit(batch[i:i+1], in[i:i+1])
		}
		return
	}
	if errors.As(err, &p) {
		if n := c.panics.Add(1); n&(n-1) == 0 { // log the 1st, 2nd, 4th, ...
			c.log.Error("result not stored: the store panicked on it", zap.String("result_id", in[0].Result.ID),
				zap.Any("panic", p.v), zap.Int64("panics", n), zap.ByteString("stack", p.stack))
		}
	}
	for i, r := range batch {
		switch {
		case err != nil:
			c.failed.Add(1)
		case fresh[i]:
			c.stored.Add(1)
		default:
			c.duplicates.Add(1)
		}
		r.done <- err
	}
	if err != nil && p == nil {
		c.log.Error("ingest batch", zap.Int("results", len(batch)), zap.Error(err))
	}
}

// whileUnavailable runs f, and again while its error says the store is
// unavailable (Unavailable), waiting longer each time up to 2 s, until f
// succeeds or fails otherwise, or ctx or the collector ends. The store's
// going and coming back are logged once each.
func (c *Collector) whileUnavailable(ctx context.Context, f func() error) error {
	wait := 50 * time.Millisecond
	for {
		err := f()
		c.downMu.Lock()
		switch {
		case Unavailable(err) && c.downSince.IsZero():
			c.downSince = time.Now()
			c.log.Warn("store unavailable: holding what comes in, trying again", zap.Error(err))
		case !Unavailable(err) && !c.downSince.IsZero():
			c.log.Info("store available again", zap.Duration("after", time.Since(c.downSince)))
			c.downSince = time.Time{}
		}
		c.downMu.Unlock()
		if !Unavailable(err) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		case <-c.ctx.Done():
			t.Stop()
			return err
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// panicError is a panic turned into an error, with where it happened.
type panicError struct {
	v     any
	stack []byte
}

func (p *panicError) Error() string { return fmt.Sprintf("panic: %v", p.v) }

// ingestRecover is Store.Ingest with a panic turned into a *panicError.
func (c *Collector) ingestRecover(in []Incoming) (fresh []bool, err error) {
	defer func() {
		if v := recover(); v != nil {
			fresh, err = nil, fmt.Errorf("ingest: %w", &panicError{v: v, stack: debug.Stack()})
		}
	}()
	return c.store.Ingest(c.ctx, in)
}

func (c *Collector) addr(topic string) (wire.Addr, bool) {
	a, err := wire.Topics{Prefix: c.cfg.Prefix}.Parse(topic)
	if err != nil {
		c.log.Warn("message on a bad topic dropped", zap.String("topic", topic), zap.Error(err))
		return a, false
	}
	return a, true
}

func (c *Collector) onStatus(ctx context.Context, topic string, b []byte) {
	a, ok := c.addr(topic)
	if !ok {
		return
	}
	if len(b) == 0 { // a cleared retained message
		return
	}
	st, err := wire.DecodeStatus(b)
	if err != nil {
		c.log.Warn("status dropped", zap.String("topic", topic), zap.Error(err))
		return
	}
	if err := c.whileUnavailable(ctx, func() error {
		_, err := c.store.SetStatus(ctx, a.Fleet, a.Device, st)
		return err
	}); err != nil {
		c.log.Error("status not stored", zap.Error(err))
	}
}

func (c *Collector) onEvent(ctx context.Context, topic string, b []byte) {
	a, ok := c.addr(topic)
	if !ok {
		return
	}
	ev, err := wire.DecodeEvent(b)
	if err != nil {
		c.log.Warn("event dropped", zap.String("topic", topic), zap.Error(err))
		return
	}
	if err := c.whileUnavailable(ctx, func() error { return c.store.AddEvent(ctx, a.Fleet, a.Device, ev) }); err != nil {
		c.log.Error("event not stored", zap.Error(err))
	}
}

func (c *Collector) onHeartbeat(ctx context.Context, topic string, b []byte) {
	a, ok := c.addr(topic)
	if !ok {
		return
	}
	hb, err := wire.DecodeHeartbeat(b)
	if err != nil {
		c.log.Warn("heartbeat dropped", zap.String("topic", topic), zap.Error(err))
		return
	}
	// Handlers run on many workers, so heartbeats can come out of
	// order: an older one must not replace a newer one.
	c.hbMu.Lock()
	if c.heartbeat == nil {
		c.heartbeat = map[wire.Addr]*wire.Heartbeat{}
	}
	if c.hbAt == nil {
		c.hbAt = map[wire.Addr]time.Time{}
	}
	if last, ok := c.hbAt[a]; !ok || !hb.At.Before(last) {
		c.hbAt[a] = hb.At
		c.heartbeat[a] = hb
	}
	c.hbMu.Unlock()
}

// heartbeats writes the latest heartbeats every heartbeatFlush, and once
// more when the collector stops.
func (c *Collector) heartbeats() {
	defer c.wg.Done()
	t := time.NewTicker(heartbeatFlush)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-c.ctx.Done():
		}
		c.hbMu.Lock()
		hbs := c.heartbeat
		c.heartbeat = nil
		c.hbMu.Unlock()
		if err := c.store.SetHeartbeats(context.Background(), hbs); err != nil {
			c.log.Error("heartbeats not stored", zap.Int("devices", len(hbs)), zap.Error(err))
		}
		if c.ctx.Err() != nil {
			return
		}
	}
}
