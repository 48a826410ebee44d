package main

import (
	"fmt"
	"time"

	"github.com/edgebench/edgebench/collector/store/scheduledb"
	"github.com/edgebench/edgebench/internal/config"
)

// defaultConfigFile is the configuration serve reads when --config is not
// given; absent, the defaults and the rest apply.
const defaultConfigFile = "/etc/edgebench-collector/collector.yaml"

// configEnv names another configuration file than the default, as --config
// does (/dev/null: none at all).
const configEnv = "EDGEBENCH_COLLECTOR_CONFIG"

// settings are serve's settings, each defined once here: its key in
// collector.yaml, its EDGEBENCH_* variable (config.EnvName) and its flag
// (config.FlagName: tls_client_ca is --tls-client-ca), its help and its
// default, layered by internal/config as the agent's are (the file, then
// the environment, then flags). The manual page and `serve --help` list
// the flags from these fields, and collector.yaml in packaging/ every key.
type settings struct {
	DB             string `yaml:"db" help:"the store: a SQLite file, or a postgres:// URL; its password from db_password_file, PGPASSWORD or PGPASSFILE, not in the URL"`
	DBPasswordFile string `yaml:"db_password_file" help:"file holding the PostgreSQL password"`

	Listen      string `yaml:"listen" help:"embedded broker address"`
	Accounts    string `yaml:"accounts" help:"accounts file (YAML) of the embedded broker: the collector's and each device's login"`
	TLSCert     string `yaml:"tls_cert" help:"certificate (PEM) of the embedded broker's TLS listener"`
	TLSKey      string `yaml:"tls_key" help:"its key (PEM)"`
	TLSClientCA string `yaml:"tls_client_ca" help:"CA (PEM) whose client certificates the embedded broker requires"`

	Broker   string `yaml:"broker" help:"external broker URL (tcp://host:1883, mqtts://...) instead of the embedded one"`
	Username string `yaml:"username" help:"login at the external broker (its password: EDGEBENCH_COLLECTOR_PASSWORD or --password)"`
	CA       string `yaml:"ca" help:"CA bundle for a TLS broker"`
	Share    string `yaml:"share" help:"shared subscription group: collectors of one group split the results"`
	Prefix   string `yaml:"prefix" help:"topic prefix (default edgebench/v1)"`

	Web          string   `yaml:"web" help:"web UI and API address (- for none)"`
	WebHost      []string `yaml:"web_host" help:"host names the web UI answers to besides IP addresses, localhost and web's: its name in the browser or behind a proxy (repeatable)"`
	APITokenFile string   `yaml:"api_token_file" help:"file holding the token the API requires (or EDGEBENCH_API_TOKEN); needed when web is not loopback"`
	// MetricsTokenFile is Prometheus' credentials_file's token.
	MetricsTokenFile string `yaml:"metrics_token_file" help:"file holding the bearer token /metrics requires, besides the API's (or EDGEBENCH_METRICS_TOKEN): Prometheus' credentials_file"`
	WebMaxExpensive  int    `yaml:"web_max_expensive" help:"requests for the pages whose work grows with the history (compare, changes, a schedule's runs) at once, and as many scrapes of /metrics; past it: 503 with Retry-After"`

	MaxSchedules      int           `yaml:"max_schedules" help:"most schedules the API stores"`
	ScheduleMinEvery  time.Duration `yaml:"schedule_min_every" help:"shortest --every of a schedule the API takes (a cron expression's is a minute)"`
	ScheduleMaxJitter time.Duration `yaml:"schedule_max_jitter" help:"longest --jitter of a schedule the API takes"`

	SignEd25519KeyFile string `yaml:"sign_ed25519_key_file" help:"sign every command with this Ed25519 private key (PEM, hex or base64); devices hold its public key"`
	SignHMACKeyFile    string `yaml:"sign_hmac_key_file" help:"sign every command with this HMAC-SHA256 key (hex or base64, at least 32 bytes), shared with the devices"`

	Keep         string `yaml:"keep" help:"keep results' summaries, commands, events, schedules' firings, changes and alerts this long, e.g. 365d or 720h; prune older ones (empty: keep all)"`
	KeepSamples  string `yaml:"keep_samples" help:"keep results' per-second samples and histograms (the bulk of a result) this long, e.g. 30d, or all; their summaries stay for keep"`
	AlertWebhook string `yaml:"alert_webhook" help:"POST every alert (change, quiet device, missed firing, growing spool) as JSON to this URL, retried with backoff"`
	LogLevel     string `yaml:"log_level" help:"debug, info, warn or error"`

	Alerts alertSettings  `yaml:"alerts"`
	Ingest ingestSettings `yaml:"ingest"`
	Limits limitSettings  `yaml:"limits"`
}

// alertSettings tune the alert loop and the webhook (alerts.Config).
type alertSettings struct {
	Interval time.Duration `yaml:"interval" help:"how often the collector looks for changes, devices gone quiet and growing spools"`
	Quiet    time.Duration `yaml:"quiet" help:"how long an online device may go without a heartbeat before it is said to have stopped reporting"`
	SpoolMax int           `yaml:"spool_max" help:"results waiting in a device's spool above which a spool that keeps growing raises an alert"`
	Retries  int           `yaml:"retries" help:"webhook attempts per alert"`
	Backoff  time.Duration `yaml:"backoff" help:"the webhook's first retry's wait, doubled each time"`
	QueueLen int           `yaml:"queue_len" help:"alerts waiting for the webhook (the newest are dropped past it)"`
}

// ingestSettings bound the ingest (collector.Config).
type ingestSettings struct {
	Workers  int `yaml:"workers" help:"results handled at once (each waits for its batch's commit)"`
	BatchMax int `yaml:"batch_max" help:"results stored per transaction"`
	QueueLen int `yaml:"queue_len" help:"received messages waiting for a handler (past it results wait in the broker; heartbeats are dropped and counted)"`
}

// limitSettings bound the embedded broker's logins (broker.Limits).
type limitSettings struct {
	LoginWait time.Duration `yaml:"login_wait" help:"from a connection's accept to its CONNECT read (TLS handshake included)"`
	Silent    time.Duration `yaml:"silent" help:"from a connection's accept to its first byte"`
	Pending   int           `yaml:"pending" help:"connections not logged in at once"`
	PerSource int           `yaml:"per_source" help:"connections not logged in at once from one address (IPv6: one /64)"`
	LogEvery  time.Duration `yaml:"log_every" help:"refusals of one user and reason are logged once in this long, then counted"`
}

// defaultSettings are serve's defaults, those the collector's packages
// would take, written out so that --help and the manual page show them.
func defaultSettings() settings {
	return settings{
		DB: "edgebench.db", Listen: "127.0.0.1:1883", Web: "127.0.0.1:8080", LogLevel: "info", WebMaxExpensive: 2, KeepSamples: "30d",
		MaxSchedules: scheduledb.DefaultMaxSchedules, ScheduleMinEvery: scheduledb.DefaultMinEvery, ScheduleMaxJitter: scheduledb.DefaultMaxJitter,
		Alerts: alertSettings{Interval: time.Minute, Quiet: 5 * time.Minute, SpoolMax: 10, Retries: 6, Backoff: time.Second, QueueLen: 1024},
		Ingest: ingestSettings{Workers: 1024, BatchMax: 512, QueueLen: 8192},
		Limits: limitSettings{LoginWait: 10 * time.Second, Silent: 2 * time.Second, Pending: 64, PerSource: 8, LogEvery: time.Minute},
	}
}

// check refuses a count or a wait that is not positive (zero would mean
// "the default" deeper down: a user who wrote 0 asked for something
// else), naming the key and where its value came from.
func (s *settings) check(src config.Sources) error {
	type num struct {
		key string
		v   int64
	}
	for _, n := range []num{
		{"web_max_expensive", int64(s.WebMaxExpensive)}, {"max_schedules", int64(s.MaxSchedules)},
		{"schedule_min_every", int64(s.ScheduleMinEvery)}, {"schedule_max_jitter", int64(s.ScheduleMaxJitter)},
		{"alerts.interval", int64(s.Alerts.Interval)}, {"alerts.quiet", int64(s.Alerts.Quiet)},
		{"alerts.spool_max", int64(s.Alerts.SpoolMax)}, {"alerts.retries", int64(s.Alerts.Retries)},
		{"alerts.backoff", int64(s.Alerts.Backoff)}, {"alerts.queue_len", int64(s.Alerts.QueueLen)},
		{"ingest.workers", int64(s.Ingest.Workers)}, {"ingest.batch_max", int64(s.Ingest.BatchMax)},
		{"ingest.queue_len", int64(s.Ingest.QueueLen)},
		{"limits.login_wait", int64(s.Limits.LoginWait)}, {"limits.silent", int64(s.Limits.Silent)},
		{"limits.pending", int64(s.Limits.Pending)}, {"limits.per_source", int64(s.Limits.PerSource)},
		{"limits.log_every", int64(s.Limits.LogEvery)},
	} {
		if n.v <= 0 {
			return fmt.Errorf("%s: %s must be positive", src.Where(n.key, "default"), n.key)
		}
	}
	if s.Alerts.Interval < time.Second {
		return fmt.Errorf("%s: alerts.interval %v: want at least 1s", src.Where("alerts.interval", "default"), s.Alerts.Interval)
	}
	return nil
}
