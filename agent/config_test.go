package agent

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/config"
	"github.com/edgebench/edgebench/internal/testenv"
)

func envMap(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func testLoader() loader {
	return loader{getenv: envMap(nil), hostname: func() (string, error) { return "Pi4-Bench", nil }}
}

func TestDefaultConfigValid(t *testing.T) {
	c := DefaultConfig()
	c.DeviceID = "x"
	if err := c.Validate(); err != nil {
		t.Fatalf("default config invalid: %v", err)
	}
	if got := c.Policy.Allow; strings.Join(got, ",") != "127.0.0.0/8,::1" {
		t.Errorf("default allowlist %v, want loopback only", got)
	}
}

func TestLoadConfigFile(t *testing.T) {
	l := testLoader()
	c, err := l.load("testdata/agent.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Broker.URL != "mqtts://broker.example:8883" || c.Fleet != "lab" || c.DeviceID != "pi4-01" {
		t.Errorf("got broker %q fleet %q device %q", c.Broker.URL, c.Fleet, c.DeviceID)
	}
	if c.Labels["server"] != "nginx" || c.Labels["build"] != "gcc-9.3" {
		t.Errorf("labels %v", c.Labels)
	}
	if c.Spool.MaxBytes != 16<<20 || c.Spool.MaxCount != 50 {
		t.Errorf("spool %+v", c.Spool)
	}
	if c.Heartbeat != 10*time.Second || c.QueueSize != 2 || c.LogLevel != "debug" {
		t.Errorf("heartbeat %v queue %d log %q", c.Heartbeat, c.QueueSize, c.LogLevel)
	}
	if c.Policy.MaxConnections != 256 || c.Policy.MaxDuration != 2*time.Minute || c.Policy.MaxBodyBytes != 64<<10 {
		t.Errorf("policy %+v", c.Policy)
	}
	if len(c.Policy.Allow) != 3 {
		t.Errorf("allow %v", c.Policy.Allow)
	}
	// Untouched keys keep their defaults.
	if c.Policy.MaxHeaders != DefaultConfig().Policy.MaxHeaders || c.StateDir != "/var/lib/edgebench" {
		t.Errorf("defaults lost: %+v", c)
	}
}

func TestLoadConfigNoFileDefaultsToHostname(t *testing.T) {
	c, err := testLoader().load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.DeviceID != "pi4-bench" {
		t.Errorf("device id %q, want the hostname lowercased", c.DeviceID)
	}
	if c.Fleet != "default" || c.TopicPrefix != "edgebench/v1" || c.Heartbeat != 30*time.Second || c.Spool.Dir != "/var/lib/edgebench/spool" {
		t.Errorf("defaults: %+v", c)
	}
}

func TestLoadConfigBadHostname(t *testing.T) {
	l := testLoader()
	l.hostname = func() (string, error) { return "my host!", nil }
	_, err := l.load("", nil)
	if err == nil || !strings.Contains(err.Error(), "device_id") || !strings.Contains(err.Error(), "my host!") {
		t.Fatalf("err %v, want one naming device_id and the hostname", err)
	}
}

func TestLoadConfigEmptyFile(t *testing.T) {
	p := testenv.TempFile(t, "agent.yaml", "# nothing\n")
	if _, err := testLoader().load(p, nil); err != nil {
		t.Fatal(err)
	}
}

func TestLoadConfigPublic(t *testing.T) {
	c, err := LoadConfig("testdata/agent.yaml", envMap(map[string]string{"EDGEBENCH_FLEET": "envfleet"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Fleet != "envfleet" {
		t.Errorf("fleet %q", c.Fleet)
	}
	if _, err := LoadConfig(filepath.Join(t.TempDir(), "missing.yaml"), os.Getenv); err == nil || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestEnvOverridesFileFlagsOverrideEnv(t *testing.T) {
	l := testLoader()
	l.getenv = envMap(map[string]string{
		"EDGEBENCH_FLEET":                  "from-env",
		"EDGEBENCH_DEVICE_ID":              "env-dev",
		"EDGEBENCH_POLICY_MAX_CONNECTIONS": "100",
		"EDGEBENCH_LABELS":                 "server=caddy,keepalive=on",
		"EDGEBENCH_POLICY_ALLOW":           "127.0.0.1/32, 10.9.0.0/16",
		"EDGEBENCH_HEARTBEAT_INTERVAL":     "5s",
	})
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	cf := BindConfigFlags(fs)
	if err := fs.Parse([]string{"-fleet", "from-flag", "-policy-max-connections", "7", "-labels", "a=1", "-labels", "b=2"}); err != nil {
		t.Fatal(err)
	}
	c, err := l.load("testdata/agent.yaml", cf)
	if err != nil {
		t.Fatal(err)
	}
	if c.Fleet != "from-flag" {
		t.Errorf("fleet %q: flag should win", c.Fleet)
	}
	if c.DeviceID != "env-dev" {
		t.Errorf("device %q: env should win over file", c.DeviceID)
	}
	if c.Policy.MaxConnections != 7 {
		t.Errorf("max_connections %d", c.Policy.MaxConnections)
	}
	if c.Heartbeat != 5*time.Second {
		t.Errorf("heartbeat %v", c.Heartbeat)
	}
	if strings.Join(c.Policy.Allow, " ") != "127.0.0.1/32 10.9.0.0/16" {
		t.Errorf("allow %q", c.Policy.Allow)
	}
	if len(c.Labels) != 2 || c.Labels["a"] != "1" || c.Labels["b"] != "2" {
		t.Errorf("labels %v: the flag replaces env's, and a second -labels adds", c.Labels)
	}
	if got := strings.Join(cf.Keys(), ","); got != "fleet,labels,policy.max_connections" {
		t.Errorf("keys %q", got)
	}
}

func TestBadFlagValueFailsParse(t *testing.T) {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	BindConfigFlags(fs)
	err := fs.Parse([]string{"-heartbeat-interval", "soon"})
	if err == nil || !strings.Contains(err.Error(), "heartbeat-interval") || !strings.Contains(err.Error(), "duration") {
		t.Fatalf("err %v", err)
	}
}

// TestDurationsTakeBareSeconds: a duration flag or variable takes a bare
// number of seconds, as every duration flag of edgebench does.
func TestDurationsTakeBareSeconds(t *testing.T) {
	l := testLoader()
	l.getenv = envMap(map[string]string{"EDGEBENCH_HEARTBEAT_INTERVAL": "20"})
	c, err := l.load("", nil)
	if err != nil || c.Heartbeat != 20*time.Second {
		t.Fatalf("env 20: %v, %v", c.Heartbeat, err)
	}
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	cf := BindConfigFlags(fs)
	if err := fs.Parse([]string{"-heartbeat-interval", "45", "-policy-max-duration", "90"}); err != nil {
		t.Fatal(err)
	}
	if c, err = l.load("", cf); err != nil || c.Heartbeat != 45*time.Second || c.Policy.MaxDuration != 90*time.Second {
		t.Fatalf("flags 45 and 90: %v, %v, %v", c.Heartbeat, c.Policy.MaxDuration, err)
	}
}

func TestBoolFlag(t *testing.T) {
	key := testenv.TempFile(t, "hmac.key", strings.Repeat("ab", 32)+"\n")
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	cf := BindConfigFlags(fs)
	if err := fs.Parse([]string{"-signing-hmac-key-file", key, "-signing-require-signature=false"}); err != nil {
		t.Fatal(err)
	}
	c, err := testLoader().load("", cf)
	if err != nil {
		t.Fatal(err)
	}
	if c.Signing.Required() {
		t.Error("require_signature=false with a key: want not required")
	}
}

func TestConfigErrors(t *testing.T) {
	readable := testenv.TempFile(t, "ca.pem", "x")
	for _, tc := range []struct {
		name, yaml string
		env        map[string]string
		want       string // the whole error, %s being the file
	}{
		{"unknown top", "fleet: a\nbrokr: x\n", nil, `%s line 2: unknown field "brokr"`},
		{"unknown nested", "policy:\n  max_connections: 3\n  max_conns: 4\n", nil, `%s line 3: unknown field "policy.max_conns"`},
		{"negative cap", "fleet: a\npolicy:\n  max_connections: -3\n", nil, `%s line 3: policy.max_connections: must be > 0, got -3`},
		{"not int", "policy:\n  max_connections: lots\n", nil, `%s line 2: policy.max_connections: want an integer, got "lots"`},
		{"bad duration", "heartbeat_interval: 10 parsecs\n", nil, `%s line 1: heartbeat_interval: want a duration (e.g. 30s, 5m), got "10 parsecs"`},
		{"bad size", "spool:\n  max_bytes: 12 furlongs\n", nil, `%s line 2: spool.max_bytes: cannot parse "12 furlongs" as a byte size (e.g. 1048576, 64MiB)`},
		{"list for scalar", "fleet:\n  - a\n", nil, `%s line 2: fleet: want a string, got a list`},
		{"bad scheme", "broker:\n  url: http://x:1883\n", nil, `%s line 2: broker.url: scheme of "http://x:1883" must be tcp, ssl, mqtt, mqtts, ws or wss`},
		{"userinfo broker", "broker:\n  url: tcp://u:p@x:1883\n", nil, `%s line 2: broker.url: "tcp://u:xxxxx@x:1883" carries user info: use broker.username and broker.password_file`},
		{"bad port", "broker:\n  url: tcp://x:99999\n", nil, `%s line 2: broker.url: port of "tcp://x:99999" must be 1-65535`},
		{"empty port", "broker:\n  url: \"tcp://127.0.0.1:\"\n", nil, `%s line 2: broker.url: "tcp://127.0.0.1:" has no port: give one (1883, or 8883 for TLS)`},
		{"empty port, IPv6", "broker:\n  url: \"mqtts://[::1]:\"\n", nil, `%s line 2: broker.url: "mqtts://[::1]:" has no port: give one (1883, or 8883 for TLS)`},
		{"no port", "broker:\n  url: tcp://broker.lan\n", nil, `%s line 2: broker.url: "tcp://broker.lan" has no port: give one (1883, or 8883 for TLS)`},
		{"reserved fleet", "fleet: _all\n", nil, `%s line 1: fleet: "_all" is reserved`},
		{"bad device", "device_id: Pi_4\n", nil, `%s line 1: device_id: "Pi_4" does not match [a-z0-9._-]{1,64}`},
		{"topic wildcard", "topic_prefix: a/+/b\n", nil, `%s line 1: topic_prefix: "a/+/b" must not hold +, # or NUL`},
		{"topic slash", "topic_prefix: /a\n", nil, `%s line 1: topic_prefix: "/a" must not have empty levels or a leading or trailing /`},
		{"topic of the broker", "topic_prefix: $SYS/edgebench\n", nil, `%s line 1: topic_prefix: "$SYS/edgebench" must not start with $, which marks the broker's own topics`},
		{"missing ca", "broker:\n  ca_file: /nonexistent/ca.pem\n", nil, `%s line 2: broker.ca_file: not readable: open /nonexistent/ca.pem: no such file or directory`},
		{"cert without key", "broker:\n  cert_file: " + readable + "\n", nil, `%s: broker.key_file: must be set with broker.cert_file`},
		{"bad cidr", "policy:\n  allow: [127.0.0.0/33]\n", nil, `%s line 2: policy.allow: "127.0.0.0/33" is not a CIDR`},
		{"bad allow entry", "policy:\n  allow:\n    - 127.0.0.1\n    - \"not a host\"\n", nil, `%s line 2: policy.allow: "not a host" is not a CIDR, an address or a host name`},
		{"require without key", "signing:\n  require_signature: true\n", nil, `%s line 2: signing.require_signature: true, but no hmac_key_file or ed25519_public_key_file is set`},
		{"short hmac key", "signing:\n  hmac_key_file: " + testenv.TempFile(t, "short.key", "abcd") + "\n", nil, "%s line 2: signing.hmac_key_file: hmac key "},
		{"relative serve root", "policy:\n  serve_root: www\n", nil, `%s line 2: policy.serve_root: "www" must be an absolute path`},
		{"missing serve root", "policy:\n  serve_root: /nonexistent/www\n", nil, `%s line 2: policy.serve_root: "/nonexistent/www" is not a folder`},
		{"log level", "log_level: loud\n", nil, `%s line 1: log_level: must be debug, info, warn or error, got "loud"`},
		{"heartbeat range", "heartbeat_interval: 1ms\n", nil, `%s line 1: heartbeat_interval: must be between 1s and 1h, got 1ms`},
		{"env bad value", "", map[string]string{"EDGEBENCH_POLICY_MAX_CONNECTIONS": "x"}, `EDGEBENCH_POLICY_MAX_CONNECTIONS: policy.max_connections: cannot parse "x" as an integer`},
		{"env invalid value", "", map[string]string{"EDGEBENCH_POLICY_MAX_RATE": "-1"}, `EDGEBENCH_POLICY_MAX_RATE: policy.max_rate: must be a finite number > 0 (requests/s), got -1`},
		{"infinite rate", "policy:\n  max_rate: .inf\n", nil, `%s line 2: policy.max_rate: must be a finite number > 0 (requests/s), got +Inf`},
		{"env infinite rate", "", map[string]string{"EDGEBENCH_POLICY_MAX_RATE": "inf"}, `EDGEBENCH_POLICY_MAX_RATE: policy.max_rate: must be a finite number > 0 (requests/s), got +Inf`},
		{"nan rate", "policy:\n  max_rate: .nan\n", nil, `%s line 2: policy.max_rate: must be a finite number > 0 (requests/s), got NaN`},
		{"negative infinite rate", "policy:\n  max_rate: -.inf\n", nil, `%s line 2: policy.max_rate: must be a finite number > 0 (requests/s), got -Inf`},
		{"yaml syntax", "fleet: [a\n", nil, `%s: line 1: did not find expected ',' or ']'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := testenv.TempFile(t, "agent.yaml", tc.yaml)
			l := testLoader()
			l.getenv = envMap(tc.env)
			_, err := l.load(p, nil)
			if err == nil {
				t.Fatal("no error")
			}
			want := strings.ReplaceAll(tc.want, "%s", p)
			if !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error\n  %s\nwant\n  %s", err, want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

func TestPasswordFile(t *testing.T) {
	pw := testenv.TempFile(t, "pw", "s3cret\n")
	p := testenv.TempFile(t, "agent.yaml", "broker:\n  password_file: "+pw+"\n")
	c, err := testLoader().load(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Broker.Password != "s3cret" {
		t.Errorf("password %q", c.Broker.Password)
	}
	p = testenv.TempFile(t, "agent.yaml", "broker:\n  password: a\n  password_file: "+pw+"\n")
	if _, err := testLoader().load(p, nil); err == nil || !strings.Contains(err.Error(), "broker.password_file") {
		t.Errorf("both password and password_file: %v", err)
	}
}

// TestEveryFieldHasEnvAndFlag checks that every leaf of Config can be set
// from the environment, and documents itself with a help text.
func TestEveryFieldHasEnvAndFlag(t *testing.T) {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	BindConfigFlags(fs)
	for _, k := range config.Keys(DefaultConfig()) {
		if k.Help == "" {
			t.Errorf("%s has no help tag", k.Name)
		}
		if fs.Lookup(config.FlagName(k.Name)) == nil {
			t.Errorf("%s has no flag", k.Name)
		}
	}
	if fs.Lookup("policy-max-connections") == nil || fs.Lookup("broker-url") == nil {
		t.Error("expected flag names missing")
	}
}

func TestPackagedConfigLoads(t *testing.T) {
	l := testLoader()
	c, err := l.load("../packaging/agent.yaml", nil)
	if err != nil {
		t.Fatalf("packaging/agent.yaml: %v", err)
	}
	d := DefaultConfig()
	d.DeviceID = c.DeviceID
	if c.Policy.MaxConnections != d.Policy.MaxConnections || strings.Join(c.Policy.Allow, ",") != strings.Join(d.Policy.Allow, ",") {
		t.Errorf("packaged config drifts from the defaults: %+v", c.Policy)
	}
}

func TestSigningConfigVerifier(t *testing.T) {
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	sc := SigningConfig{Ed25519PublicKeyFile: testenv.TempFile(t, "pub", hex.EncodeToString(pub))}
	v, err := sc.Verifier()
	if err != nil || v == nil {
		t.Fatalf("verifier %v %v", v, err)
	}
	if !sc.Required() {
		t.Error("key set: signatures should be required by default")
	}
	if v, err := (SigningConfig{}).Verifier(); v != nil || err != nil {
		t.Errorf("no key: %v %v", v, err)
	}
}
