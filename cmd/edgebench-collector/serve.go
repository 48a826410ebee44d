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

// serveConfig is what `serve` was asked to do.
type serveConfig struct {
	db, listen, accounts       string
	dbf                        dbFlag
	broker, username, password string
	ca, share, web, prefix     string
	logLevel                   string
	tokenFile, token           string
	metricsTokenFile           string
	metricsToken               string
	webMaxExpensive            int
	schedules                  scheduledb.ScheduleLimits
	tlsCert, tlsKey, clientCA  string
	webHosts                   []string
	signHMAC, signEd25519      string
	keep, keepSamples          time.Duration
	alerts                     alerts.Config
	ingest                     ingestSettings
	limits                     broker.Limits
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
	c.dbf = dbFlag{raw: st.DB, typed: strings.HasPrefix(src["db"], "flag "), passwordFile: st.DBPasswordFile, stderr: env.Stderr}
	c.listen, c.accounts = st.Listen, st.Accounts
	c.tlsCert, c.tlsKey, c.clientCA = st.TLSCert, st.TLSKey, st.TLSClientCA
	c.broker, c.username, c.ca, c.share, c.prefix = st.Broker, st.Username, st.CA, st.Share, st.Prefix
	c.web, c.webHosts, c.tokenFile = st.Web, st.WebHost, st.APITokenFile
	c.metricsTokenFile, c.webMaxExpensive = st.MetricsTokenFile, st.WebMaxExpensive
	c.schedules = scheduledb.ScheduleLimits{Max: st.MaxSchedules, MinEvery: st.ScheduleMinEvery, MaxJitter: st.ScheduleMaxJitter}
	c.signEd25519, c.signHMAC = st.SignEd25519KeyFile, st.SignHMACKeyFile
	c.logLevel = st.LogLevel
	for _, h := range c.webHosts {
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
	a := st.Alerts
	c.alerts = alerts.Config{Webhook: st.AlertWebhook, Interval: a.Interval, Quiet: a.Quiet, SpoolMax: a.SpoolMax,
		Retries: a.Retries, Backoff: a.Backoff, QueueLen: a.QueueLen}
	c.ingest = st.Ingest
	l := st.Limits
	c.limits = broker.Limits{LoginWait: l.LoginWait, Silent: l.Silent, Pending: l.Pending, PerSource: l.PerSource, LogEvery: l.LogEvery}
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
		return nil, cli.Usagef("%s: log_level %q: want debug, info, warn or error", where("log_level"), c.logLevel)
	}
	token, err := apiToken(c.tokenFile, env.Getenv)
	if err != nil {
		return nil, err
	}
	c.token = token
	if c.metricsToken, err = metricsToken(c.metricsTokenFile, env.Getenv); err != nil {
		return nil, err
	}
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
		TLSCert: sc.tlsCert, TLSKey: sc.tlsKey, ClientCAFile: sc.clientCA, Keep: sc.keep, KeepSamples: sc.keepSamples, Log: log, Alerts: sc.alerts,
		MetricsToken: sc.metricsToken, WebMaxExpensive: sc.webMaxExpensive, Schedules: sc.schedules,
		IngestWorkers: sc.ingest.Workers, BatchMax: sc.ingest.BatchMax, QueueLen: sc.ingest.QueueLen, BrokerLimits: sc.limits}
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
