package agent

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/edgebench/edgebench/internal/config"
	"github.com/edgebench/edgebench/sign"
)

// Config is the agent's configuration: a YAML file, then EDGEBENCH_*
// environment variables, then command-line flags, each overriding the one
// before, layered by internal/config. Every field has one key (its YAML
// path, e.g. "policy.max_connections"); the environment variable is
// EDGEBENCH_ plus the key in upper case with dots as underscores
// (EDGEBENCH_POLICY_MAX_CONNECTIONS) and the flag is the key with dots and
// underscores as dashes (-policy-max-connections). Lists and maps are comma
// separated there ("127.0.0.0/8,::1", "server=nginx,build=gcc-9.3"); an
// empty variable is taken as unset.
type Config struct {
	Broker      BrokerConfig      `yaml:"broker"`
	DeviceID    string            `yaml:"device_id" help:"device id [a-z0-9._-]{1,64} (default: the hostname, lowercased)"`
	Fleet       string            `yaml:"fleet" help:"fleet id [a-z0-9._-]{1,64}"`
	TopicPrefix string            `yaml:"topic_prefix" help:"MQTT topic prefix"`
	Labels      map[string]string `yaml:"labels" help:"labels carried by every result, k=v,k2=v2"`
	StateDir    string            `yaml:"state_dir" help:"directory for the replay guard and the in-flight run marker"`
	Spool       SpoolConfig       `yaml:"spool"`
	Heartbeat   time.Duration     `yaml:"heartbeat_interval" help:"interval between heartbeats"`
	QueueSize   int               `yaml:"queue_size" help:"commands queued while a run is busy (0: reject when busy)"`
	Policy      PolicyConfig      `yaml:"policy"`
	Signing     SigningConfig     `yaml:"signing"`
	LogLevel    string            `yaml:"log_level" help:"debug, info, warn or error"`
}

// BrokerConfig says how to reach the MQTT broker.
type BrokerConfig struct {
	URL          string `yaml:"url" help:"broker URL: tcp://, ssl://, mqtt://, mqtts://, ws:// or wss://"`
	CAFile       string `yaml:"ca_file" help:"PEM file of the CAs that sign the broker's certificate"`
	CertFile     string `yaml:"cert_file" help:"PEM client certificate"`
	KeyFile      string `yaml:"key_file" help:"PEM client key"`
	Username     string `yaml:"username" help:"broker user name"`
	Password     string `yaml:"password" help:"broker password (prefer password_file)"`
	PasswordFile string `yaml:"password_file" help:"file holding the broker password"`
}

// SpoolConfig bounds the on-disk result spool.
type SpoolConfig struct {
	Dir      string          `yaml:"dir" help:"spool directory"`
	MaxCount int             `yaml:"max_count" help:"most results kept in the spool"`
	MaxBytes config.ByteSize `yaml:"max_bytes" help:"most bytes kept in the spool (e.g. 64MiB)"`
}

// PolicyConfig is what a remote command may ask of this device; see Policy.
type PolicyConfig struct {
	Allow          []string        `yaml:"allow" help:"target allowlist: CIDRs, IP addresses or host names"`
	MaxConnections int             `yaml:"max_connections" help:"most connections a run may open"`
	MaxDuration    time.Duration   `yaml:"max_duration" help:"longest run duration (and warm-up, and timeout)"`
	MaxRate        float64         `yaml:"max_rate" help:"highest open-loop rate, requests/s"`
	MaxRequests    int64           `yaml:"max_requests" help:"most requests a run may send"`
	MaxRepeat      int             `yaml:"max_repeat" help:"most repetitions of a run"`
	MaxBodyBytes   config.ByteSize `yaml:"max_body_bytes" help:"largest request body"`
	MaxHeaders     int             `yaml:"max_headers" help:"most extra request headers"`
	MaxHeaderBytes config.ByteSize `yaml:"max_header_bytes" help:"largest total size of the extra request headers"`
	ServeRoot      string          `yaml:"serve_root" help:"folder below which the serve command may serve files (default none: the synthetic endpoints only)"`
	// FleetFile lists the fleet's boards, one address per line: a load
	// test may target them besides the allowlist (fleet.go).
	FleetFile        string        `yaml:"fleet_file" help:"file of the fleet's boards, one IP address per line, that load tests may target besides policy.allow (default none)"`
	ServeAllow       []string      `yaml:"serve_allow" help:"addresses the serve command may listen on: CIDRs or addresses (default loopback only; 0.0.0.0 or :: must be listed as such)"`
	MaxServeDuration time.Duration `yaml:"max_serve_duration" help:"longest serve command"`
	MaxWatchDuration time.Duration `yaml:"max_watch_duration" help:"longest probe command: the watch on the target of a two-machine run"`
}

// SigningConfig names the key that command signatures are checked with.
// At most one of the two key files may be set. RequireSignature defaults to
// true when a key is set; set it to false explicitly to accept unsigned
// commands while a fleet moves to signing (signed ones are still checked).
type SigningConfig struct {
	HMACKeyFile          string `yaml:"hmac_key_file" help:"file with the shared HMAC-SHA256 key (hex or base64)"`
	Ed25519PublicKeyFile string `yaml:"ed25519_public_key_file" help:"file with the collector's Ed25519 public key (hex, base64 or PEM)"`
	RequireSignature     *bool  `yaml:"require_signature" help:"reject unsigned commands (default: true when a key is set)"`
}

// Required reports whether unsigned commands are rejected.
func (s SigningConfig) Required() bool {
	if s.RequireSignature != nil {
		return *s.RequireSignature
	}
	return s.HMACKeyFile != "" || s.Ed25519PublicKeyFile != ""
}

// Verifier loads the configured key; it returns nil, nil when no key is set.
func (s SigningConfig) Verifier() (sign.Verifier, error) {
	switch {
	case s.HMACKeyFile != "":
		return sign.LoadHMACVerifier(s.HMACKeyFile)
	case s.Ed25519PublicKeyFile != "":
		return sign.LoadEd25519Verifier(s.Ed25519PublicKeyFile)
	}
	return nil, nil
}

// DefaultConfig returns the configuration used for every key that the file,
// the environment and the flags leave unset. DeviceID is empty: LoadConfig
// fills it from the hostname.
func DefaultConfig() *Config {
	return &Config{
		Broker:      BrokerConfig{URL: "tcp://127.0.0.1:1883"},
		Fleet:       "default",
		TopicPrefix: "edgebench/v1",
		StateDir:    "/var/lib/edgebench",
		Spool: SpoolConfig{
			Dir:      "/var/lib/edgebench/spool",
			MaxCount: 1000,
			MaxBytes: 64 << 20,
		},
		Heartbeat: 30 * time.Second,
		QueueSize: 0,
		Policy: PolicyConfig{
			Allow:            []string{"127.0.0.0/8", "::1"},
			MaxConnections:   1024,
			MaxDuration:      10 * time.Minute,
			MaxRate:          100000,
			MaxRequests:      100_000_000,
			MaxRepeat:        30,
			MaxBodyBytes:     1 << 20,
			MaxHeaders:       32,
			MaxHeaderBytes:   8 << 10,
			ServeAllow:       []string{"127.0.0.0/8", "::1"},
			MaxServeDuration: 6 * time.Hour,
			MaxWatchDuration: 6 * time.Hour,
		},
		LogLevel: "info",
	}
}

// LoadConfig reads the YAML file at path (none when path is ""), applies the
// EDGEBENCH_* variables that getenv returns, fills the defaults, resolves
// password_file and validates. Its errors are one line naming the source and
// the field, e.g. "agent.yaml line 7: policy.max_connections: must be > 0,
// got -3" or "agent.yaml line 3: unknown field \"brokr\"".
func LoadConfig(path string, getenv func(string) string) (*Config, error) {
	return LoadConfigWithFlags(path, getenv, nil)
}

// LoadConfigWithFlags is LoadConfig with the flags collected by
// BindConfigFlags applied last, so that they win over the file and the
// environment. flags may be nil.
func LoadConfigWithFlags(path string, getenv func(string) string, flags *config.Flags) (*Config, error) {
	l := loader{getenv: getenv, hostname: os.Hostname}
	return l.load(path, flags)
}

// BindConfigFlags defines one flag per config key on fs (e.g.
// -broker-url, -device-id, -policy-max-connections, -labels k=v,k2=v2;
// a list or map flag given twice adds to itself) and returns the collector
// of the values given. Pass it to LoadConfigWithFlags after fs.Parse.
func BindConfigFlags(fs *flag.FlagSet) *config.Flags { return config.Bind(fs, DefaultConfig()) }

type loader struct {
	getenv   func(string) string
	hostname func() (string, error)
}

func (l loader) load(path string, flags *config.Flags) (*Config, error) {
	c := DefaultConfig()
	src, err := config.Load(c, path, l.getenv, flags)
	if err != nil {
		return nil, err
	}
	def := "config"
	if path != "" {
		def = path
	}
	where := func(key string) string { return src.Where(key, def) }
	if c.DeviceID == "" {
		h, err := l.hostname()
		if err != nil {
			return nil, fmt.Errorf("%s: device_id: not set and the hostname is unknown: %v", where("device_id"), err)
		}
		h = strings.ToLower(h)
		if err := checkID(h); err != nil {
			return nil, fmt.Errorf("%s: device_id: not set, and the hostname %q is no valid id (%v): set device_id", where("device_id"), h, err)
		}
		c.DeviceID = h
	}
	if err := c.Validate(); err != nil {
		var fe *config.FieldError
		if errors.As(err, &fe) {
			return nil, fmt.Errorf("%s: %w", where(fe.Field), err)
		}
		return nil, err
	}
	if c.Broker.PasswordFile != "" {
		b, err := os.ReadFile(c.Broker.PasswordFile)
		if err != nil {
			return nil, fmt.Errorf("%s: broker.password_file: %v", where("broker.password_file"), err)
		}
		c.Broker.Password = strings.TrimRight(string(b), "\r\n")
	}
	return c, nil
}
