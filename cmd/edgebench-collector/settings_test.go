package main

import (
	"cmp"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/cli"
	"github.com/edgebench/edgebench/internal/config"
)

// serve's settings come from collector.yaml, then EDGEBENCH_* variables,
// then flags, each over the one before, and every one lands in the field
// of the collector it names: the alert loop's, the ingest's and the
// embedded broker's limits, which had no flag before.
func TestServeSettingsLayers(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "collector.yaml")
	yaml := `# the collector of the lab
db: /var/lib/edgebench-collector/lab.db
accounts: /etc/edgebench/accounts.yaml
listen: 0.0.0.0:1883
web_host: [bench.lan, ci.lan]
keep: 90d
log_level: warn
alerts:
  interval: 30s
  quiet: 10m
  spool_max: 50
  retries: 3
  backoff: 2s
  queue_len: 99
ingest:
  workers: 32
  batch_max: 64
  queue_len: 1000
limits:
  login_wait: 7s
  silent: 1s
  pending: 16
  per_source: 3
  log_every: 5m
`
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"EDGEBENCH_ALERTS_QUIET": "15m", "EDGEBENCH_INGEST_WORKERS": "48"}
	env := &cli.Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(k string) string { return cmp.Or(vars[k], noEnv(k)) }}
	c, err := parseServe([]string{"--config", file, "--ingest-workers", "8", "--limits-pending", "20", "--web-host", "pi.lan"}, env)
	if err != nil {
		t.Fatal(err)
	}
	cfg := c.config(nil)
	got := map[string]any{
		"db": cfg.DB, "accounts": c.st.Accounts, "listen": cfg.Listen, "keep": cfg.Keep, "log_level": c.st.LogLevel,
		"web_host":        strings.Join(cfg.WebHosts, ","),
		"alerts.interval": cfg.Alerts.Interval, "alerts.quiet": cfg.Alerts.Quiet, "alerts.spool_max": cfg.Alerts.SpoolMax,
		"alerts.retries": cfg.Alerts.Retries, "alerts.backoff": cfg.Alerts.Backoff, "alerts.queue_len": cfg.Alerts.QueueLen,
		"ingest.workers": cfg.IngestWorkers, "ingest.batch_max": cfg.BatchMax, "ingest.queue_len": cfg.QueueLen,
		"limits.login_wait": cfg.BrokerLimits.LoginWait, "limits.silent": cfg.BrokerLimits.Silent, "limits.pending": cfg.BrokerLimits.Pending,
		"limits.per_source": cfg.BrokerLimits.PerSource, "limits.log_every": cfg.BrokerLimits.LogEvery,
	}
	want := map[string]any{
		"db": "/var/lib/edgebench-collector/lab.db", "accounts": "/etc/edgebench/accounts.yaml", "listen": "0.0.0.0:1883",
		"keep": 90 * 24 * time.Hour, "log_level": "warn",
		"web_host":        "pi.lan", // a flag replaces the file's list
		"alerts.interval": 30 * time.Second, "alerts.quiet": 15 * time.Minute, "alerts.spool_max": 50,
		"alerts.retries": 3, "alerts.backoff": 2 * time.Second, "alerts.queue_len": 99,
		"ingest.workers": 8, "ingest.batch_max": 64, "ingest.queue_len": 1000,
		"limits.login_wait": 7 * time.Second, "limits.silent": time.Second, "limits.pending": 20,
		"limits.per_source": 3, "limits.log_every": 5 * time.Minute,
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %v, want %v", k, got[k], w)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s not checked", k)
		}
	}

	// Without a file the defaults are the collector's own.
	c, err = parseServe([]string{"--accounts", "a.yaml"}, &cli.Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	cfg = c.config(nil)
	if cfg.Alerts.Interval != time.Minute || cfg.Alerts.Quiet != 5*time.Minute || cfg.IngestWorkers != 1024 || cfg.BrokerLimits.Pending != 64 || cfg.DB != "edgebench.db" {
		t.Errorf("defaults: %+v %d %+v %s", cfg.Alerts, cfg.IngestWorkers, cfg.BrokerLimits, cfg.DB)
	}
}

// A mistake in the file is one line that names the file, the line and the
// key, and a usage error (exit 2): an unknown key (a typo), a value of the
// wrong kind, a count or a wait that is not positive; a named file that
// is absent too.
func TestServeSettingsMistakes(t *testing.T) {
	dir := t.TempDir()
	env := &cli.Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(k string) string {
		if k == "EDGEBENCH_LIMITS_PER_SOURCE" {
			return "-1"
		}
		return ""
	}}
	for _, tc := range []struct{ name, yaml, want string }{
		{"typo", "accounts: a.yaml\nalerts:\n  quite: 5m\n", "line 3: unknown field \"alerts.quite\"; did you mean alerts.quiet?"},
		{"kind", "accounts: a.yaml\ningest:\n  workers: many\n", "line 3"},
		{"zero", "accounts: a.yaml\nalerts:\n  retries: 0\n", "line 3: alerts.retries must be positive"},
		{"env", "accounts: a.yaml\n", "EDGEBENCH_LIMITS_PER_SOURCE: limits.per_source must be positive"},
		{"keep", "accounts: a.yaml\nkeep: 180\n", "line 2: keep \"180\""},
	} {
		file := filepath.Join(dir, tc.name+".yaml")
		os.WriteFile(file, []byte(tc.yaml), 0o600)
		e := env
		if tc.name != "env" {
			e = &cli.Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: noEnv}
		}
		_, err := parseServe([]string{"--config", file}, e)
		var ue *cli.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one usage line with %q", tc.name, err, tc.want)
		}
	}
	if _, err := parseServe([]string{"--config", filepath.Join(dir, "absent.yaml"), "--accounts", "a.yaml"}, env); err == nil {
		t.Error("an absent --config file taken for defaults")
	}
}

// The collector.yaml the package ships holds every key of the settings,
// commented out at its default, and loads as it is.
func TestShippedCollectorYAML(t *testing.T) {
	b, err := os.ReadFile("../../packaging/collector.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	d := defaultSettings()
	for _, k := range config.Keys(&d) {
		if !strings.Contains(text, leaf(k.Name)+":") {
			t.Errorf("packaging/collector.yaml does not show %s", k.Name)
		}
	}
	env := &cli.Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: noEnv}
	c, err := parseServe([]string{"--config", "../../packaging/collector.yaml"}, env)
	if err != nil {
		t.Fatalf("the shipped file: %v", err)
	}
	if cfg := c.config(nil); cfg.Alerts.Interval != time.Minute || cfg.BrokerLimits.Pending != 64 || cfg.Keep != 365*24*time.Hour {
		t.Errorf("the shipped file: %+v", cfg)
	}
}

func leaf(key string) string { return key[strings.LastIndex(key, ".")+1:] }
