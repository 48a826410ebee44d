package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
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
	"github.com/edgebench/edgebench/collector/store/scheduledb"
	"github.com/edgebench/edgebench/collector/store/sqldb"
	"github.com/edgebench/edgebench/collector/web"
	"github.com/edgebench/edgebench/internal/cli"
	"github.com/edgebench/edgebench/internal/config"
	"github.com/edgebench/edgebench/sign"
)

// serveConfig is what `serve` was asked to do: the settings loaded, and
// what parseServe made of them: the store's DSN with its password, the
// retention as durations, the tokens read from their files, and the
// password at the external broker. The collector's Config is derived
// from it (config).
type serveConfig struct {
	st                  settings
	db                  string // the store, with its password (dbFlag)
	password            string
	keep, keepSamples   time.Duration
	token, metricsToken string
}

func parseServe(args []string, env *cli.Env) (*serveConfig, error) {
	fs := cli.NewFlagSet("serve", "edgebench-collector serve [--config "+defaultConfigFile+"] [flags]", env.Stderr)
	path := fs.String("config", cmp.Or(env.Getenv(configEnv), defaultConfigFile), "configuration file (YAML; or "+configEnv+"; absent: defaults): every flag below is a key of it, e.g. tls_client_ca or alerts.quiet")
	c := &serveConfig{}
	fs.StringVar(&c.password, "password", env.Getenv(config.EnvName("collector.password")), "password at the external broker (or EDGEBENCH_COLLECTOR_PASSWORD)")
	// The flags show st's defaults; Load then layers the file, the
	// environment and the flags given over them.
	st := defaultSettings()
	gofs := flag.NewFlagSet("serve", flag.ContinueOnError)
	cf := config.Bind(gofs, &st)
	fs.AddGoFlagSet(gofs)
	if err := fs.ParseNoArgs(args); err != nil {
		return nil, err
	}
	if _, err := os.Stat(*path); os.IsNotExist(err) && !fs.Changed("config") && env.Getenv(configEnv) == "" {
		*path = "" // the default file is optional; a named one is not
	}
	src, err := config.Load(&st, *path, env.Getenv, cf)
	if err != nil {
		return nil, cli.Usagef("%v", err)
	}
	if err := st.check(src); err != nil {
		return nil, cli.Usagef("%v", err)
	}
	where := func(key string) string { return src.Where(key, "--"+config.FlagName(key)) }
	c.st = st
	dbf := dbFlag{raw: st.DB, typed: strings.HasPrefix(src["db"], "flag "), passwordFile: st.DBPasswordFile, stderr: env.Stderr}
	for _, h := range st.WebHost {
		if err := web.ValidWebHost(h); err != nil {
			return nil, cli.Usagef("%s: web_host: %v", where("web_host"), err)
		}
	}
	if st.Keep != "" {
		if c.keep, err = parseKeep(st.Keep); err != nil {
			return nil, cli.Usagef("%s: keep %q: %v", where("keep"), st.Keep, err)
		}
	}
	switch st.KeepSamples {
	case "all":
		c.keepSamples = -1
	default:
		if c.keepSamples, err = parseKeep(st.KeepSamples); err != nil {
			return nil, cli.Usagef("%s: keep_samples %q: %v, or all", where("keep_samples"), st.KeepSamples, err)
		}
	}
	if st.AlertWebhook != "" {
		if err := alerts.CheckWebhook(st.AlertWebhook); err != nil {
			return nil, cli.Usagef("%s: alert_webhook: %v", where("alert_webhook"), err)
		}
	}
	if c.db, err = dbf.dsn(); err != nil {
		return nil, err
	}
	if st.Broker == "" && st.Accounts == "" {
		return nil, cli.Usagef("the embedded broker needs --accounts FILE (or --broker URL for an external one)")
	}
	if st.Broker != "" && st.Accounts != "" {
		return nil, cli.Usagef("--accounts is for the embedded broker; an external broker has its own")
	}
	if (st.TLSCert == "") != (st.TLSKey == "") || (st.TLSClientCA != "" && st.TLSCert == "") {
		return nil, cli.Usagef("--tls-cert and --tls-key go together (and --tls-client-ca with them)")
	}
	if st.TLSCert != "" && st.Broker != "" {
		return nil, cli.Usagef("--tls-cert is for the embedded broker; an external broker has its own")
	}
	if st.Share != "" && st.Broker == "" {
		return nil, cli.Usagef("--share needs --broker")
	}
	if st.SignHMACKeyFile != "" && st.SignEd25519KeyFile != "" {
		return nil, cli.Usagef("--sign-hmac-key-file and --sign-ed25519-key-file exclude each other: keep the one the devices check")
	}
	if _, err := zapcore.ParseLevel(st.LogLevel); err != nil {
		return nil, cli.Usagef("%s: log_level %q: want debug, info, warn or error", where("log_level"), st.LogLevel)
	}
	token, err := apiToken(st.APITokenFile, env.Getenv)
	if err != nil {
		return nil, err
	}
	c.token = token
	if c.metricsToken, err = metricsToken(st.MetricsTokenFile, env.Getenv); err != nil {
		return nil, err
	}
	return c, nil
}

// config is the collector's Config of sc, logging to log; its signer
// and the embedded broker's accounts are read from their files by
// runServe.
func (sc *serveConfig) config(log *zap.Logger) collector.Config {
	st := &sc.st
	a, l := st.Alerts, st.Limits
	return collector.Config{DB: sc.db, Prefix: st.Prefix, Listen: st.Listen, Broker: st.Broker, Username: st.Username,
		Password: sc.password, CAFile: st.CA, Share: st.Share, Web: st.Web, WebHosts: st.WebHost, APIToken: sc.token,
		TLSCert: st.TLSCert, TLSKey: st.TLSKey, ClientCAFile: st.TLSClientCA, Keep: sc.keep, KeepSamples: sc.keepSamples, Log: log,
		Alerts: alerts.Config{Webhook: st.AlertWebhook, Interval: a.Interval, Quiet: a.Quiet, SpoolMax: a.SpoolMax,
			Retries: a.Retries, Backoff: a.Backoff, QueueLen: a.QueueLen},
		MetricsToken: sc.metricsToken, WebMaxExpensive: st.WebMaxExpensive,
		Schedules:     scheduledb.ScheduleLimits{Max: st.MaxSchedules, MinEvery: st.ScheduleMinEvery, MaxJitter: st.ScheduleMaxJitter},
		IngestWorkers: st.Ingest.Workers, BatchMax: st.Ingest.BatchMax, QueueLen: st.Ingest.QueueLen,
		BrokerLimits: broker.Limits{LoginWait: l.LoginWait, Silent: l.Silent, Pending: l.Pending, PerSource: l.PerSource, LogEvery: l.LogEvery}}
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
	level, _ := zapcore.ParseLevel(sc.st.LogLevel)
	zc := zap.NewProductionConfig()
	zc.Level = zap.NewAtomicLevelAt(level)
	zc.Sampling = nil
	log, err := zc.Build()
	if err != nil {
		return fmt.Errorf("logger: %w", err)
	}
	defer log.Sync()
	cfg := sc.config(log)
	if cfg.Signer, err = loadSigner(sc.st.SignHMACKeyFile, sc.st.SignEd25519KeyFile); err != nil {
		return err
	}
	if sc.st.Accounts != "" {
		a, err := broker.LoadAccounts(sc.st.Accounts)
		if err != nil {
			return err
		}
		cfg.Accounts = a
	}
	c, err := collector.Start(ctx, cfg)
	if err != nil {
		return err
	}
	broker := sc.st.Broker
	if broker == "" {
		broker = "tcp://" + sc.st.Listen + " (embedded)"
	}
	log.Info("collector started", zap.String("db", sqldb.RedactDB(sc.db)), zap.String("broker", broker), zap.String("web", c.WebAddr()), zap.Int("pid", os.Getpid()))
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
