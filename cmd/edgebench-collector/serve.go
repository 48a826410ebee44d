package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/edgebench/edgebench/collector"
	"github.com/edgebench/edgebench/collector/alerts"
	"github.com/edgebench/edgebench/collector/broker"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/web"
	"github.com/edgebench/edgebench/internal/cli"
	"github.com/edgebench/edgebench/internal/config"
	"github.com/edgebench/edgebench/sign"
)

// serveConfig is what `serve` was asked to do.
type serveConfig struct {
	db, listen, accounts       string
	dbf                        dbFlag
	broker, username, password string
	ca, share, web, prefix     string
	logLevel                   string
	tokenFile, token           string
	tlsCert, tlsKey, clientCA  string
	webHosts                   []string
	signHMAC, signEd25519      string
	keep, keepSamples          time.Duration
	alerts                     alerts.Config
}

func parseServe(args []string, env *cli.Env) (*serveConfig, error) {
	c := &serveConfig{}
	fs := cli.NewFlagSet("serve", "edgebench-collector serve [flags]", env.Stderr)
	dbVar(fs, env, &c.dbf)
	fs.StringVar(&c.listen, "listen", "127.0.0.1:1883", "embedded broker address")
	fs.StringVar(&c.accounts, "accounts", env.Getenv(config.EnvName("accounts")), "accounts file (YAML) of the embedded broker: the collector's and each device's login")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "certificate (PEM) of the embedded broker's TLS listener")
	fs.StringVar(&c.tlsKey, "tls-key", "", "its key (PEM)")
	fs.StringVar(&c.clientCA, "tls-client-ca", "", "CA (PEM) whose client certificates the embedded broker requires")
	fs.StringVar(&c.broker, "broker", "", "external broker URL (tcp://host:1883, mqtts://...) instead of the embedded one")
	fs.StringVar(&c.username, "username", "", "login at the external broker")
	fs.StringVar(&c.password, "password", env.Getenv(config.EnvName("collector.password")), "password at the external broker (or EDGEBENCH_COLLECTOR_PASSWORD)")
	fs.StringVar(&c.ca, "ca", "", "CA bundle for a TLS broker")
	fs.StringVar(&c.share, "share", "", "shared subscription group: collectors of one group split the results")
	fs.StringVar(&c.web, "web", "127.0.0.1:8080", "web UI and API address (- for none)")
	fs.Func("web-host", "a host name the web UI answers to besides IP addresses, localhost and --web's (repeatable): its name in the browser or behind a proxy", func(s string) error {
		if err := web.ValidWebHost(s); err != nil {
			return err
		}
		c.webHosts = append(c.webHosts, s)
		return nil
	})
	fs.StringVar(&c.tokenFile, "api-token-file", "", "file holding the token the API requires (or EDGEBENCH_API_TOKEN); needed when --web is not loopback")
	fs.StringVar(&c.signEd25519, "sign-ed25519-key-file", "", "sign every command with this Ed25519 private key (PEM, hex or base64); devices hold its public key")
	fs.StringVar(&c.signHMAC, "sign-hmac-key-file", "", "sign every command with this HMAC-SHA256 key (hex or base64, at least 32 bytes), shared with the devices")
	fs.Func("keep", "keep results' summaries, commands, events, schedules' firings, changes and alerts this long, e.g. 365d or 720h; prune older ones (default: keep all)", func(s string) error {
		d, err := parseKeep(s)
		c.keep = d
		return err
	})
	fs.Func("keep-samples", "keep results' per-second samples and histograms (the bulk of a result) this long, e.g. 30d, or all; their summaries stay for --keep (default 30d)", func(s string) error {
		if s == "all" {
			c.keepSamples = -1
			return nil
		}
		d, err := parseKeep(s)
		c.keepSamples = d
		if err != nil {
			return fmt.Errorf("%w, or all", err)
		}
		return nil
	})
	fs.StringVar(&c.prefix, "prefix", "", "topic prefix (default edgebench/v1)")
	fs.Func("alert-webhook", "POST every alert (change, quiet device, missed firing, growing spool) as JSON to this URL, retried with backoff", func(s string) error {
		c.alerts.Webhook = s
		return alerts.CheckWebhook(s)
	})
	fs.StringVar(&c.logLevel, "log-level", "info", "debug, info, warn or error")
	if err := fs.ParseNoArgs(args); err != nil {
		return nil, err
	}
	var err error
	if c.db, err = c.dbf.dsn(); err != nil {
		return nil, err
	}
	if c.broker == "" && c.accounts == "" {
		return nil, cli.Usagef("the embedded broker needs --accounts FILE (or --broker URL for an external one)")
	}
	if c.broker != "" && c.accounts != "" {
		return nil, cli.Usagef("--accounts is for the embedded broker; an external broker has its own")
	}
	if (c.tlsCert == "") != (c.tlsKey == "") || (c.clientCA != "" && c.tlsCert == "") {
		return nil, cli.Usagef("--tls-cert and --tls-key go together (and --tls-client-ca with them)")
	}
	if c.tlsCert != "" && c.broker != "" {
		return nil, cli.Usagef("--tls-cert is for the embedded broker; an external broker has its own")
	}
	if c.share != "" && c.broker == "" {
		return nil, cli.Usagef("--share needs --broker")
	}
	if c.signHMAC != "" && c.signEd25519 != "" {
		return nil, cli.Usagef("--sign-hmac-key-file and --sign-ed25519-key-file exclude each other: keep the one the devices check")
	}
	if _, err := zapcore.ParseLevel(c.logLevel); err != nil {
		return nil, cli.Usagef("--log-level %q: want debug, info, warn or error", c.logLevel)
	}
	token, err := apiToken(c.tokenFile, env.Getenv)
	if err != nil {
		return nil, err
	}
	c.token = token
	return c, nil
}

func cmdServe(ctx context.Context, env *cli.Env, args []string) error {
	cfg, err := parseServe(args, env)
	if err != nil {
		return err
	}
	return runServe(ctx, cfg)
}

// runServe runs the collector until ctx ends.
func runServe(ctx context.Context, sc *serveConfig) error {
	level, _ := zapcore.ParseLevel(sc.logLevel)
	zc := zap.NewProductionConfig()
	zc.Level = zap.NewAtomicLevelAt(level)
	zc.Sampling = nil
	log, err := zc.Build()
	if err != nil {
		return fmt.Errorf("logger: %w", err)
	}
	defer log.Sync()
	cfg := collector.Config{DB: sc.db, Prefix: sc.prefix, Listen: sc.listen, Broker: sc.broker, Username: sc.username,
		Password: sc.password, CAFile: sc.ca, Share: sc.share, Web: sc.web, WebHosts: sc.webHosts, APIToken: sc.token,
		TLSCert: sc.tlsCert, TLSKey: sc.tlsKey, ClientCAFile: sc.clientCA, Keep: sc.keep, KeepSamples: sc.keepSamples, Log: log, Alerts: sc.alerts}
	if cfg.Signer, err = loadSigner(sc.signHMAC, sc.signEd25519); err != nil {
		return err
	}
	if sc.accounts != "" {
		a, err := broker.LoadAccounts(sc.accounts)
		if err != nil {
			return err
		}
		cfg.Accounts = a
	}
	c, err := collector.Start(ctx, cfg)
	if err != nil {
		return err
	}
	broker := sc.broker
	if broker == "" {
		broker = "tcp://" + sc.listen + " (embedded)"
	}
	log.Info("collector started", zap.String("db", store.RedactDB(sc.db)), zap.String("broker", broker), zap.String("web", c.WebAddr()), zap.Int("pid", os.Getpid()))
	<-ctx.Done()
	log.Info("collector stopping")
	stats := c.Stats()
	done := make(chan error, 1)
	go func() { done <- c.Close() }()
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		err = fmt.Errorf("close: still busy after 30s")
	}
	log.Info("collector stopped", zap.Int64("stored", stats.Stored), zap.Int64("duplicates", stats.Duplicates),
		zap.Int64("malformed", stats.Malformed), zap.Int64("failed", stats.Failed), zap.Int64("panics", stats.Panics))
	return err
}

// loadSigner reads the key commands are signed with: an HMAC key or an
// Ed25519 private key, nil without either.
func loadSigner(hmacFile, ed25519File string) (sign.Signer, error) {
	switch {
	case hmacFile != "":
		key, err := sign.LoadHMACKey(hmacFile)
		if err != nil {
			return nil, err
		}
		return sign.NewHMACSigner(key)
	case ed25519File != "":
		priv, err := sign.LoadEd25519PrivateKey(ed25519File)
		if err != nil {
			return nil, err
		}
		return sign.NewEd25519Signer(priv)
	}
	return nil, nil
}

// parseKeep reads --keep: a number of days ("180d") or a duration with its
// unit ("720h"). A bare number is refused: seconds, as other flags read
// it, would prune nearly everything.
func parseKeep(s string) (time.Duration, error) {
	const want = "want a number of days such as 180d, or a duration such as 720h"
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.ParseFloat(n, 64)
		if err != nil || !(days > 0 && days <= 100*365) {
			return 0, errors.New(want)
		}
		return time.Duration(days * 24 * float64(time.Hour)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, errors.New(want)
	}
	return d, nil
}
