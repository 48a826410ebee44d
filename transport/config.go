package transport

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/spool"
	"github.com/edgebench/edgebench/wire"
)

// This file is what a Client is told: where and as whom to connect
// (ClientConfig, with its defaults and checks, and TLS), and what to do
// besides connecting (Options).

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

	// CleanSession has the broker forget the client's session, with its
	// subscriptions and the messages queued for it, when it disconnects.
	// Collectors of a share group set it: a broker such as mosquitto goes
	// on handing a persistent session its share of the messages while it
	// is away, and a collector that is gone for good would hold them.
	CleanSession bool
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
	//
	// The status's Last Will says lost, and Close publishes offline: the
	// other collectors of a share group watch it and announce themselves
	// again (a new ConnSeq), so that the devices resend at once what the
	// collector that left had taken and not acknowledged.
	AnnounceCollector bool

	QueueLen int // messages waiting for the handlers; default 64; beyond it QoS 1 messages wait (and so their PUBACKs), QoS 0 ones are dropped and counted
	Workers  int // goroutines running handlers; default 1
}

func (cfg *ClientConfig) fill() error {
	u, err := url.Parse(cfg.Broker)
	if err != nil || u.Host == "" || (u.Port() == "" && strings.HasSuffix(u.Host, ":")) {
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
