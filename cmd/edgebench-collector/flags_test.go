package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/cli"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/wire"
	"github.com/edgebench/edgebench/wire/wiretest"
)

// TestTriggerFlagsAsTyped parses trigger's load-test flags as they are
// typed for ab and wrk, durations included.
func TestTriggerFlagsAsTyped(t *testing.T) {
	const u = "http://127.0.0.1/"
	env := &cli.Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: noEnv}
	caPEM := wiretest.CABundle(t)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, caPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want func(s wire.LoadTestSpec, tc *triggerConfig) bool
	}{
		{[]string{"--device", "pi-1", "-c5000", "-d", "30", u}, func(s wire.LoadTestSpec, _ *triggerConfig) bool {
			return s.Connections == 5000 && s.DurationMS == 30000 && s.KeepAlive
		}},
		{[]string{"-c5000", "-n50000", "--fleet", "lab", u}, func(s wire.LoadTestSpec, _ *triggerConfig) bool {
			return s.Connections == 5000 && s.Requests == 50000 && s.DurationMS == 0
		}},
		{[]string{u, "--select", "server=nginx", "-t10", "-c10", "-d30s"}, func(s wire.LoadTestSpec, _ *triggerConfig) bool {
			return s.Threads == 10 && s.Connections == 10 && s.DurationMS == 30000
		}},
		{[]string{"--device", "pi-1", "-k=false", "-HHost: x", "--timeout=2s", "-warmup", "1", u}, func(s wire.LoadTestSpec, _ *triggerConfig) bool {
			return !s.KeepAlive && slices.Equal(s.Headers, []wire.Header{{Name: "Host", Value: "x"}}) && s.TimeoutMS == 2000 && s.WarmupMS == 1000
		}},
		{[]string{"--device", "pi-1", "--no-keepalive", "-timeout", "2s", "--ttl", "90", "--max-wait", "2m", "--wait", u}, func(s wire.LoadTestSpec, tc *triggerConfig) bool {
			return !s.KeepAlive && s.TimeoutMS == 2000 && tc.req.TTL == 90*time.Second && tc.maxWait == 2*time.Minute && tc.wait
		}},
		{[]string{"--device", "pi-1", "--connections", "50", "--duration", "2m", "--header", "Host: x", u}, func(s wire.LoadTestSpec, _ *triggerConfig) bool {
			return s.Connections == 50 && s.DurationMS == 120000 && len(s.Headers) == 1
		}},
		// The TLS and HTTP/2 flags of edgebench run.
		{[]string{"--device", "pi-1", "--h2", "--streams", "10", "--no-tls-resume", "--tls-version", "1.3", "https://127.0.0.1/"},
			func(s wire.LoadTestSpec, _ *triggerConfig) bool {
				return s.HTTP2 && s.Streams == 10 && s.TLS != nil && s.TLS.NoResume && s.TLS.Version == "1.3" && !s.TLS.Insecure && s.TLS.CACerts == nil
			}},
		{[]string{"--device", "pi-1", "--h2c", "--max-concurrent-streams", "4", u}, func(s wire.LoadTestSpec, _ *triggerConfig) bool {
			return s.HTTP2 && s.Streams == 4 && s.TLS == nil
		}},
		{[]string{"--device", "pi-1", "--insecure", "https://127.0.0.1/"}, func(s wire.LoadTestSpec, _ *triggerConfig) bool {
			return !s.HTTP2 && s.Streams == 0 && s.TLS != nil && s.TLS.Insecure && !s.TLS.NoResume && s.TLS.Version == ""
		}},
		{[]string{"--device", "pi-1", "--repeat", "auto", "--repeat-rsd", "2", "--repeat-max", "6", u}, func(s wire.LoadTestSpec, _ *triggerConfig) bool {
			return s.RepeatAuto && s.RepeatRSDPct == 2 && s.Repeat == 6 && s.RepeatBudgetMS == 600_000
		}},
		{[]string{"--device", "pi-1", "--repeat", "4", u}, func(s wire.LoadTestSpec, _ *triggerConfig) bool {
			return !s.RepeatAuto && s.Repeat == 4 && s.RepeatRSDPct == 0 && s.RepeatBudgetMS == 0
		}},
		{[]string{"--device", "pi-1", "https://127.0.0.1/"}, func(s wire.LoadTestSpec, _ *triggerConfig) bool {
			return s.TLS == nil && !s.HTTP2 // the devices' defaults: verify against their system's CAs, resume
		}},
		{[]string{"--device", "pi-1", "--cacert", ca, "https://127.0.0.1/"}, func(s wire.LoadTestSpec, _ *triggerConfig) bool {
			return s.TLS != nil && string(s.TLS.CACerts) == string(caPEM) && !s.TLS.Insecure
		}},
		// A capacity search: the word capacity and its flags.
		{[]string{"--device", "pi-1", "capacity", "--slo", "p99<50ms,errors<0.1%", "--max-rate", "2000", "--trial", "3s", "--budget", "5m", "-c", "32", u},
			func(s wire.LoadTestSpec, tc *triggerConfig) bool {
				c := tc.req.Capacity
				return c != nil && c.SLO == "p99<50ms,errors<0.1%" && c.MaxRate == 2000 && c.TrialMS == 3000 && c.BudgetMS == 300_000 && s.Connections == 32
			}},
		{[]string{"--device", "pi-1", u}, func(_ wire.LoadTestSpec, tc *triggerConfig) bool { return tc.req.Capacity == nil }},
		// --tolerance in either of edgebench capacity's forms.
		{[]string{"--device", "pi-1", "capacity", "--slo", "p99<50ms", "--tolerance", "5%", u}, func(_ wire.LoadTestSpec, tc *triggerConfig) bool {
			return tc.req.Capacity != nil && tc.req.Capacity.Tolerance == 0.05
		}},
		{[]string{"--device", "pi-1", "capacity", "--slo", "p99<50ms", "--tolerance", "0.05", u}, func(_ wire.LoadTestSpec, tc *triggerConfig) bool {
			return tc.req.Capacity != nil && tc.req.Capacity.Tolerance == 0.05
		}},
		// A run across two devices: the loader, the target, and the
		// target's processes to watch; a capacity search across two.
		{[]string{"--device", "laptop", "--target-device", "pi-3", "--watch", "nginx", "--watch", "812", "-c", "5", "-n", "1000", u},
			func(s wire.LoadTestSpec, tc *triggerConfig) bool {
				return tc.req.Device == "laptop" && tc.req.TargetDevice == "pi-3" && tc.req.TargetFleet == "" &&
					slices.Equal(s.Watch, []string{"nginx", "812"}) && s.Requests == 1000 && s.Connections == 5
			}},
		{[]string{"--device", "laptop", "--fleet", "lab", "--target-device", "pi-3", "--target-fleet", "lab2", "capacity", "--slo", "p99<50ms", u},
			func(_ wire.LoadTestSpec, tc *triggerConfig) bool {
				return tc.req.TargetDevice == "pi-3" && tc.req.TargetFleet == "lab2" && tc.req.Capacity != nil
			}},
	} {
		tc2, err := parseTrigger(tc.args, env)
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if tc2.req.Spec.URL != tc.args[len(tc.args)-1] && tc2.req.Spec.URL != u || !tc.want(tc2.req.Spec, tc2) {
			t.Errorf("%q: spec %+v", tc.args, tc2.req.Spec)
		}
	}
}

// TestTriggerServe: trigger ... serve starts the built-in target for 10
// minutes unless -d says, on an address and from a folder of the
// device's policy; no URL, no load.
func TestTriggerServe(t *testing.T) {
	env := &cli.Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: noEnv}
	for _, c := range []struct {
		args []string
		want wire.ServeSpec
	}{
		{[]string{"--device", "pi", "serve"}, wire.ServeSpec{DurationMS: 600_000}},
		{[]string{"--device", "pi", "serve", "--dir", "/srv/www", "-d", "10m", "--addr", "192.168.2.13:8080"},
			wire.ServeSpec{Addr: "192.168.2.13:8080", Dir: "/srv/www", DurationMS: 600_000}},
		{[]string{"serve", "--select", "board=pi3", "-d", "90"}, wire.ServeSpec{DurationMS: 90_000}},
	} {
		tc, err := parseTrigger(c.args, env)
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		if tc.req.Serve == nil || *tc.req.Serve != c.want || tc.req.Spec.URL != "" || tc.req.Spec.Connections != 0 {
			t.Errorf("%q: serve %+v, spec %+v; want %+v and no load", c.args, tc.req.Serve, tc.req.Spec, c.want)
		}
	}
}

// TestCollectorFlagMistakes: one line naming the flag, exit status 2.
func TestCollectorFlagMistakes(t *testing.T) {
	dir := t.TempDir()
	keyFile, bigFile := filepath.Join(dir, "key.pem"), filepath.Join(dir, "big.pem")
	key := "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oIPmSgBEjHrKoAoGCCqGSM49\n-----END EC PRIVATE KEY-----\n"
	if err := os.WriteFile(keyFile, append(wiretest.CABundle(t), key...), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bigFile, bytes.Repeat([]byte{'\n'}, wire.MaxCABundle+1), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"trigger", "--device", "pi-1", "--keep-alive", "http://127.0.0.1/"}, "edgebench-collector trigger: unknown flag --keep-alive; did you mean --keepalive?"},
		{[]string{"trigger", "--device", "pi-1", "-d", "soon", "http://127.0.0.1/"}, `edgebench-collector trigger: -d "soon": want a duration such as 30s, 500ms or 2m (a bare number is seconds)`},
		{[]string{"trigger", "--devise", "pi-1", "http://127.0.0.1/"}, "edgebench-collector trigger: unknown flag --devise; did you mean --device?"},
		{[]string{"runs", "--limit", "ten"}, `edgebench-collector runs: --limit "ten": want a whole number`},
		{[]string{"runs", "--since", "yesterday"}, `edgebench-collector runs: --since "yesterday": want a duration such as 30s, 500ms or 2m (a bare number is seconds)`},
		{[]string{"compare", "--label", "server"}, `edgebench-collector compare: --label "server": want k=v`},
		{[]string{"devices", "-json=maybe"}, `edgebench-collector devices: -json "maybe": want true or false`},
		{[]string{"sevre"}, `edgebench-collector: unknown command "sevre"; did you mean serve?`},
		{[]string{"trigger", "--device", "pi-1", "capacity", "--slo", "p98<5ms", "http://127.0.0.1/"},
			`edgebench-collector trigger: --slo: "p98<5ms": unknown metric "p98": want p50, p90, p99, p99.9, max, errors or timeouts`},
		{[]string{"trigger", "--device", "pi-1", "capacity", "http://127.0.0.1/"}, "edgebench-collector trigger: capacity needs --slo, e.g. --slo 'p99<50ms,errors<0.1%'"},
		// The tolerance as edgebench capacity takes it; NaN and Inf at the
		// flag, not "json: unsupported value" after; a long --slo clipped.
		{[]string{"trigger", "--device", "pi-1", "capacity", "--slo", "p99<5ms", "--tolerance", "100%", "http://127.0.0.1/"},
			`edgebench-collector trigger: --tolerance "100%": want between 0 and 100 % (5% or 0.05)`},
		{[]string{"trigger", "--device", "pi-1", "capacity", "--slo", "p99<5ms", "--tolerance", "NaN", "http://127.0.0.1/"},
			`edgebench-collector trigger: --tolerance "NaN": want a share such as 5% or 0.05`},
		{[]string{"trigger", "--device", "pi-1", "capacity", "--slo", "p99<5ms", "--max-rate", "NaN", "http://127.0.0.1/"},
			`edgebench-collector trigger: --max-rate "NaN": want a finite number`},
		{[]string{"trigger", "--device", "pi-1", "--repeat", "auto", "--repeat-rsd", "NaN", "http://127.0.0.1/"},
			`edgebench-collector trigger: --repeat-rsd "NaN": want a finite number`},
		{[]string{"trigger", "--device", "pi-1", "--repeat", "auto", "--repeat-max", "100000", "http://127.0.0.1/"},
			"edgebench-collector trigger: --repeat auto: want --repeat-rsd above 0 and below 100, --repeat-max 3..1000 (as run's), --repeat-budget 0 or more"},
		{[]string{"trigger", "--device", "pi-1", "--rate", "Inf", "http://127.0.0.1/"},
			`edgebench-collector trigger: --rate "Inf": want a finite number`},
		{[]string{"trigger", "--device", "pi-1", "capacity", "--slo", "p99<5ms", "--start", "-5", "http://127.0.0.1/"},
			"edgebench-collector trigger: capacity: --start: want 0 (the device's default) or more"},
		{[]string{"trigger", "--device", "pi-1", "--slo", strings.Repeat("x", 100_000), "http://127.0.0.1/"},
			"edgebench-collector trigger: --slo is for a capacity search: trigger ... capacity --slo '" + strings.Repeat("x", 80) + "...' URL"},
		{[]string{"trigger", "--device", "pi-1", "capacity", "--slo", "p99<5ms," + strings.Repeat("x", 100_000), "http://127.0.0.1/"},
			`edgebench-collector trigger: --slo: "` + strings.Repeat("x", 80) + `...": want METRIC<BOUND, such as p99<50ms or errors<0.1%`},
		{[]string{"trigger", "--device", "pi-1", "capacity", "--slo", "p99<5ms", "--repeat", "auto", "http://127.0.0.1/"},
			"edgebench-collector trigger: --repeat is not for capacity: a capacity search re-measures within its search; use run for repeats (trigger ... --repeat auto URL)"},
		{[]string{"trigger", "--device", "pi-1", "capacity", "--slo", "p99<5ms", "--repeat", "3", "http://127.0.0.1/"},
			"edgebench-collector trigger: --repeat is not for capacity: a capacity search re-measures within its search; use run for repeats (trigger ... --repeat auto URL)"},
		{[]string{"trigger", "--device", "pi-1", "--repeat-max", "5", "capacity", "--slo", "p99<5ms", "http://127.0.0.1/"},
			"edgebench-collector trigger: --repeat is not for capacity: a capacity search re-measures within its search; use run for repeats (trigger ... --repeat auto URL)"},
		{[]string{"trigger", "--device", "pi-1", "--slo", "p99<5ms", "http://127.0.0.1/"},
			"edgebench-collector trigger: --slo is for a capacity search: trigger ... capacity --slo 'p99<5ms' URL"},
		{[]string{"trigger", "--device", "pi-1", "--h2", "http://127.0.0.1/"},
			"edgebench-collector trigger: --h2 is HTTP/2 over TLS: give an https:// URL (--h2c is HTTP/2 in cleartext)"},
		{[]string{"trigger", "--device", "pi-1", "--streams", "5", "https://127.0.0.1/"},
			"edgebench-collector trigger: --streams 5: concurrent streams are HTTP/2's: add --h2 (https) or --h2c (http)"},
		{[]string{"trigger", "--device", "pi-1", "--h2", "--streams", "1001", "https://127.0.0.1/"}, "edgebench-collector trigger: --streams 1001: want 1..1000"},
		{[]string{"trigger", "--device", "pi-1", "--tls-version", "1.1", "https://127.0.0.1/"}, `edgebench-collector trigger: --tls-version "1.1": want 1.2 or 1.3`},
		{[]string{"trigger", "--device", "pi-1", "--insecure", "http://127.0.0.1/"}, "edgebench-collector trigger: --cacert, --insecure and --tls-version are for https:// URLs"},
		{[]string{"trigger", "--device", "pi-1", "--cacert", keyFile, "https://127.0.0.1/"},
			"edgebench-collector trigger: --cacert " + keyFile + ": CA bundle: EC PRIVATE KEY block: a private key: a command carries certificates only"},
		{[]string{"trigger", "--device", "pi-1", "--cacert", bigFile, "https://127.0.0.1/"},
			"edgebench-collector trigger: --cacert " + bigFile + ": 65537 bytes, a command carries at most 65536"},
		// Two devices: one loader, another target; serve loads nothing.
		{[]string{"trigger", "--select", "board=pi4", "--target-device", "pi-3", "http://127.0.0.1/"},
			"edgebench-collector trigger: --target-device needs one loader: --device ID (not --select or a whole fleet)"},
		{[]string{"trigger", "--fleet", "lab", "--target-device", "pi-3", "http://127.0.0.1/"},
			"edgebench-collector trigger: --target-device needs one loader: --device ID (not --select or a whole fleet)"},
		{[]string{"trigger", "--device", "pi-3", "--target-device", "pi-3", "http://127.0.0.1/"},
			"edgebench-collector trigger: --target-device pi-3 is the loader itself: a run on one device needs no target"},
		{[]string{"trigger", "--device", "pi-1", "--target-fleet", "lab", "http://127.0.0.1/"},
			"edgebench-collector trigger: --target-fleet goes with --target-device"},
		{[]string{"trigger", "--device", "pi-1", "serve", "http://127.0.0.1/"},
			"edgebench-collector trigger: serve takes no URL: edgebench-collector trigger --device ID serve [--addr ADDR] [--dir DIR] [-d 10m]"},
		{[]string{"trigger", "--device", "pi-1", "serve", "--rate", "100"},
			"edgebench-collector trigger: --rate is not for serve, which starts the built-in target and loads nothing"},
		{[]string{"trigger", "--device", "pi-1", "--target-device", "pi-3", "serve"},
			"edgebench-collector trigger: --target-device is not for serve, which starts the built-in target and loads nothing"},
		{[]string{"trigger", "--device", "pi-1", "--addr", "10.0.0.2:80", "http://127.0.0.1/"},
			"edgebench-collector trigger: --addr and --dir are serve's: edgebench-collector trigger --device ID serve --addr ADDR"},
		{[]string{"trigger", "serve"}, "edgebench-collector trigger: say which devices: --device ID, --fleet F or --select k=v"},
		{[]string{"devices", "--addresses", "--format", "json"}, "edgebench-collector devices: --addresses writes a fleet file: no --format with it"},
	} {
		var out, errb bytes.Buffer
		code := program().Run(context.Background(), &cli.Env{Stdout: &out, Stderr: &errb, Getenv: noEnv}, tc.args)
		if code != 2 || errb.String() != tc.want+"\n" {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, errb.String(), tc.want)
		}
	}
}

// TestCollectorExitStatuses runs the collector binary: a usage mistake is
// 2, help is 0, and a trigger whose flags parse (-d 30 included) gets as
// far as the collector it cannot reach, 1.
func TestCollectorExitStatuses(t *testing.T) {
	bin := testenv.Binary(t, ".")
	addr := testenv.FreeAddr(t) // nothing listens there
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string // a part of it
	}{
		{[]string{"trigger", "--server", "http://" + addr, "--device", "pi-1", "-c5000", "-d", "30", "-k=false", "-HHost: x", "http://127.0.0.1/"}, 1, "connection refused"},
		{[]string{"trigger", "--server", "http://" + addr, "--device", "pi-1", "-c5000", "-d", "30", "--keep-alive", "http://127.0.0.1/"}, 2, "did you mean --keepalive?"},
		{[]string{"--version"}, 0, ""},
		{[]string{}, 2, "usage: edgebench-collector COMMAND"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, bin, tc.args...)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		err := cmd.Run()
		cancel()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.code || !strings.Contains(errb.String(), tc.stderr) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, code, errb.String(), tc.code, tc.stderr)
		}
		if tc.code == 2 && len(tc.args) > 0 && strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("%q: want one line, got %q", tc.args, errb.String())
		}
	}
}

// TestServeKeep: --keep takes days or a duration with its unit; a bare
// number (seconds elsewhere) and nonsense are usage mistakes.
func TestServeKeep(t *testing.T) {
	env := &cli.Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: noEnv}
	for in, want := range map[string]time.Duration{"180d": 180 * 24 * time.Hour, "0.5d": 12 * time.Hour, "720h": 720 * time.Hour} {
		c, err := parseServe([]string{"--broker", "tcp://127.0.0.1:1883", "--keep", in}, env)
		if err != nil || c.keep != want {
			t.Errorf("--keep %s: %v %v, want %v", in, c, err, want)
		}
	}
	for _, in := range []string{"180", "d", "-3d", "0d", "soon", "-1h", "0s", "1e9d"} {
		var ue *cli.UsageError
		if _, err := parseServe([]string{"--broker", "tcp://127.0.0.1:1883", "--keep", in}, env); !errors.As(err, &ue) {
			t.Errorf("--keep %s: %v, want a usage error", in, err)
		}
	}
}
