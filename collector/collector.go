package collector

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/collector/alerts"
	"github.com/edgebench/edgebench/collector/broker"
	"github.com/edgebench/edgebench/collector/metrics"
	"github.com/edgebench/edgebench/collector/schedules"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/scheduledb"
	"github.com/edgebench/edgebench/collector/web"
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
	Accounts *broker.Accounts
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
	// "Authorization: Bearer TOKEN", and on the pages whose work grows
	// with the history (compare, changes), which take it as a browser's
	// password too (webguard.go). A Web address that is not loopback
	// needs one: the API sends commands to the whole fleet.
	APIToken string
	// MetricsToken, when set, is what /metrics requires as a bearer
	// token (Prometheus' authorization: credentials_file), besides the
	// API's; without either /metrics is open.
	MetricsToken string
	// WebMaxExpensive bounds the requests for pages and API routes whose
	// work grows with the stored history (compare, changes, a schedule's
	// runs) running at once, and as many scrapes of /metrics; past it they
	// are answered 503 with Retry-After. Default 2.
	WebMaxExpensive int

	// Schedules bound the schedules the API takes: how many, the
	// shortest --every, the longest --jitter (scheduledb.ScheduleLimits; its
	// defaults for the zero values).
	Schedules scheduledb.ScheduleLimits

	// Signer, when set, signs every command for the topic it is sent on
	// (see wire.Command.SigningBytes); devices with the matching key
	// refuse unsigned commands.
	Signer sign.Signer

	// Keep, when set, is how long results (with their runs and samples),
	// commands, events, schedules' firings, changes and alerts are kept:
	// older ones are pruned at start and every hour.
	Keep time.Duration
	// KeepSamples is how long the per-second samples and histograms of
	// results are kept (their summaries stay for Keep): default
	// DefaultKeepSamples; below 0, for ever.
	KeepSamples time.Duration

	Alerts alerts.Config // changes, quiet devices, missed firings, growing spools: on MQTT and to a webhook

	IngestWorkers int // results handled at once (each waits for its batch's commit, so this bounds a batch); default 1024
	BatchMax      int // results per transaction; default 512
	// QueueLen is how many received messages may wait for a handler.
	// Past it, QoS 1 messages (results, events) wait in the broker, whose
	// in-flight window holds them back until there is room; QoS 0
	// heartbeats are dropped and counted. Default 8192.
	QueueLen int
	Log      *zap.Logger

	// BrokerLimits bound the embedded broker's logins (its gate: waits,
	// connections waiting to log in, per address); zero fields: defaults.
	BrokerLimits broker.Limits
	storeTimeout time.Duration // each store call's deadline; default defaultStoreTimeout; tests shorten it
	pairTimes    pairTimes     // a run across two devices' waits; tests shorten them
}

func (c *Config) fill() error {
	if c.DB == "" {
		c.DB = "edgebench.db"
	}
	if c.Prefix == "" {
		c.Prefix = wire.DefaultPrefix
	}
	if c.storeTimeout <= 0 {
		c.storeTimeout = defaultStoreTimeout
	}
	c.pairTimes.fill()
	if c.KeepSamples == 0 {
		c.KeepSamples = DefaultKeepSamples
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
		if err := c.Accounts.Check(); err != nil {
			return fmt.Errorf("collector: accounts: %w", err)
		}
		if c.Accounts.Collector.Password == "" {
			return errors.New("collector: the collector account needs a plain password to log in to its own broker")
		}
	}
	if c.Web == "" {
		c.Web = "127.0.0.1:8080"
	}
	if c.Web != "-" && c.APIToken == "" && !web.LoopbackAddr(c.Web) {
		return fmt.Errorf("collector: web %s is not a loopback address: set an API token", c.Web)
	}
	for _, h := range c.WebHosts {
		if err := web.ValidWebHost(h); err != nil {
			return fmt.Errorf("collector: %w", err)
		}
	}
	c.Schedules = c.Schedules.WithDefaults()
	if c.WebMaxExpensive <= 0 {
		c.WebMaxExpensive = defaultWebMaxExpensive
	}
	if c.IngestWorkers <= 0 {
		c.IngestWorkers = 1024
	}
	if c.BatchMax <= 0 {
		c.BatchMax = 512
	}
	if c.QueueLen <= 0 {
		c.QueueLen = 8192
	}
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
	store  *store.Store
	broker *broker.Broker
	client *transport.Client
	sub    *transport.Subscriber
	web    *http.Server
	webLn  net.Listener

	ingest chan ingestReq
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	stored, duplicates, failed atomic.Int64
	refused                    atomic.Int64 // results refused for good (acked as rejected) by the collector's rules
	eventsRefused              atomic.Int64 // events refused: over their device's quota, or naming a command not sent to it
	drops                      *dropLog     // warnings of what the ingest drops or refuses, summed
	quotas                     *broker.Quotas
	panics                     atomic.Int64 // results the store panicked on
	brokerRefused              atomic.Int64 // logins, connections and packets the embedded broker refused

	downMu    sync.Mutex
	downSince time.Time // when the store became unavailable; zero while it is not

	alerts  *alerts.Alerter
	metrics *metrics.Metrics
	sched   *schedules.Scheduler

	pages, scrapeSlots *web.Limiter // the expensive pages' and /metrics' places (webguard.go)

	hbMu      sync.Mutex
	heartbeat map[wire.Addr]*wire.Heartbeat // the latest of each device since the last flush
	hbAt      map[wire.Addr]time.Time       // the time of each device's latest heartbeat taken

	pairMu sync.Mutex
	pairs  map[string]chan struct{} // the wake of each pair this collector drives, by its load's and its watch's id (pair.go)
	parts  atomic.Int64             // devices' results kept for a run across two devices
}

// Start opens the store, starts the embedded broker (unless an external
// one is configured), connects, subscribes and serves the web UI.
func Start(ctx context.Context, cfg Config) (*Collector, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, cfg.DB)
	if err != nil {
		return nil, err
	}
	c := &Collector{cfg: cfg, log: cfg.Log, store: st, ingest: make(chan ingestReq, cfg.IngestWorkers),
		drops: newDropLog(cfg.Log.Named("ingest"), cfg.BrokerLimits.LogEvery)}
	if b := st.Backfilled(); b.Results > 0 {
		cfg.Log.Info("verdicts of stored results filled from their payloads", zap.Int("results", b.Results),
			zap.Int("runs", b.Runs), zap.Int("undecodable", b.Undecodable))
	}
	accounts := cfg.Accounts
	if cfg.Broker != "" {
		accounts = nil // an external broker's devices: DefaultQuota
	}
	c.quotas = broker.NewQuotas(broker.QuotaOf(accounts), st.StoredBytesSince)
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.metrics = metrics.New(c.ctx, metrics.Config{Store: st, Log: cfg.Log,
		Stored: c.stored.Load, Duplicates: c.duplicates.Load, Failed: c.failed.Load, BrokerRefused: c.brokerRefused.Load,
		AlertsPublished: func() int64 { return c.AlertStats().Published }, AlertsPosted: func() int64 { return c.AlertStats().Posted },
		AlertsDropped: func() int64 { return c.AlertStats().Dropped }})
	if err := c.start(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Collector) start() error {
	cfg := c.cfg
	brokerURL, user, pass := cfg.Broker, cfg.Username, cfg.Password
	if brokerURL == "" {
		tlsCfg, err := broker.LoadTLS(cfg.TLSCert, cfg.TLSKey, cfg.ClientCAFile)
		if err != nil {
			return err
		}
		b, err := broker.Start(broker.Config{Listen: cfg.Listen, TLS: tlsCfg, Accounts: cfg.Accounts, Prefix: cfg.Prefix,
			Limits: cfg.BrokerLimits, Log: c.log.Named("broker"), Refused: &c.brokerRefused})
		if err != nil {
			return err
		}
		c.broker = b
		brokerURL = "tcp://" + b.Addr()
		user, pass = cfg.Accounts.Collector.Username, cfg.Accounts.Collector.Password
	}
	c.wg.Add(4)
	go c.batcher()
	go c.heartbeats()
	go c.rebuildSeries()
	go c.sweepPairs()
	c.wg.Add(1)
	go c.retention()

	cl, err := transport.Dial(transport.ClientConfig{
		Broker: brokerURL, ClientID: cfg.ClientID, Username: user, Password: pass, CAFile: cfg.CAFile, Prefix: cfg.Prefix,
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
	sub, err := transport.NewSubscriber(cl, transport.SubscriberConfig{Group: cfg.Share, Handler: c.onResult, Dropped: c.drops.note})
	if err != nil {
		return fmt.Errorf("collector: %w", err)
	}
	c.sub = sub
	c.startFleet()

	if cfg.Web != "-" {
		o := web.Options{Log: c.log.Named("web")}
		if cfg.APIToken == "" { // a button would bypass the token
			o.Cancel = func(ctx context.Context, id string) error { _, err := c.Cancel(ctx, id); return err }
		}
		w, err := web.New(c.store, o)
		if err != nil {
			return err
		}
		c.pages = web.NewLimiter("expensive pages", cfg.WebMaxExpensive)
		c.scrapeSlots = web.NewLimiter("/metrics", cfg.WebMaxExpensive)
		mux := http.NewServeMux()
		mux.Handle("/", w)
		mux.Handle("GET /compare", c.expensivePage(w))
		api := http.NewServeMux()
		c.api(api)
		c.fleetRoutes(mux, api)
		mux.Handle("/api/", web.RequireToken(cfg.APIToken, api))
		ln, err := net.Listen("tcp", cfg.Web)
		if err != nil {
			return fmt.Errorf("collector: web: %w", err)
		}
		c.webLn = ln
		// A page of another site open in a browser on this machine must
		// not be able to POST a trigger to 127.0.0.1.
		c.web = &http.Server{Handler: web.SecurityHeaders(web.AllowHosts(cfg.Web, cfg.WebHosts,
			http.NewCrossOriginProtection().Handler(withStoreDeadline(mux, cfg.storeTimeout)))),
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

// WaitConnected waits until the collector is connected to its broker.
func (c *Collector) WaitConnected(ctx context.Context) error { return c.client.WaitConnected(ctx) }

// Store is the collector's store.
func (c *Collector) Store() *store.Store { return c.store }

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
	// Refused counts the results the collector refused for good (acked as
	// rejected): naming a command not sent to their device, or an id
	// another device's result has.
	Refused int64
	// EventsRefused counts the command events refused: over their
	// device's quota, or naming a command that was not sent to it.
	EventsRefused int64
	// Panics counts the messages dropped because handling them panicked
	// (a bug): in a handler or in the store. The collector goes on.
	Panics int64
	// Parts counts the devices' results kept for a run across two
	// devices, until it is joined (the joined results count in Stored).
	Parts int64
	transport.SubscriberStats
}

// Stats returns the collector's counts.
func (c *Collector) Stats() Stats {
	return Stats{Stored: c.stored.Load(), Duplicates: c.duplicates.Load(), Failed: c.failed.Load(), Refused: c.refused.Load(),
		EventsRefused: c.eventsRefused.Load(), Parts: c.parts.Load(),
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
