package agent

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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
			Allow:          []string{"127.0.0.0/8", "::1"},
			MaxConnections: 1024,
			MaxDuration:    10 * time.Minute,
			MaxRate:        100000,
			MaxRequests:    100_000_000,
			MaxRepeat:      30,
			MaxBodyBytes:   1 << 20,
			MaxHeaders:     32,
			MaxHeaderBytes: 8 << 10,
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

// fieldErr is a *config.FieldError: key's value is bad.
func fieldErr(key, format string, a ...any) error {
	return &config.FieldError{Field: key, Msg: fmt.Sprintf(format, a...)}
}

// isName reports whether s is 1 to 64 bytes of [a-z0-9._-], and also of
// [A-Z] when upper is set.
func isName(s string, upper bool) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '.', c == '_', c == '-':
		case upper && 'A' <= c && c <= 'Z':
		default:
			return false
		}
	}
	return true
}

// checkID checks a device or fleet id as SPEC 6 defines them.
func checkID(s string) error {
	if s == "_all" {
		return errors.New(`"_all" is reserved`)
	}
	if !isName(s, false) {
		return fmt.Errorf("%q does not match [a-z0-9._-]{1,64}", s)
	}
	return nil
}

// Validate checks every field; its error is a *FieldError.
func (c *Config) Validate() error {
	if err := checkBrokerURL(c.Broker.URL); err != nil {
		return fieldErr("broker.url", "%v", err)
	}
	for _, f := range []struct{ key, path string }{
		{"broker.ca_file", c.Broker.CAFile},
		{"broker.cert_file", c.Broker.CertFile},
		{"broker.key_file", c.Broker.KeyFile},
		{"broker.password_file", c.Broker.PasswordFile},
		{"signing.hmac_key_file", c.Signing.HMACKeyFile},
		{"signing.ed25519_public_key_file", c.Signing.Ed25519PublicKeyFile},
	} {
		if f.path == "" {
			continue
		}
		if err := checkReadable(f.path); err != nil {
			return fieldErr(f.key, "%v", err)
		}
	}
	if (c.Broker.CertFile == "") != (c.Broker.KeyFile == "") {
		if c.Broker.CertFile == "" {
			return fieldErr("broker.cert_file", "must be set with broker.key_file")
		}
		return fieldErr("broker.key_file", "must be set with broker.cert_file")
	}
	if c.Broker.Password != "" && c.Broker.PasswordFile != "" {
		return fieldErr("broker.password_file", "set both password and password_file; keep one")
	}
	if err := checkID(c.DeviceID); err != nil {
		return fieldErr("device_id", "%v", err)
	}
	if err := checkID(c.Fleet); err != nil {
		return fieldErr("fleet", "%v", err)
	}
	if err := checkTopicPrefix(c.TopicPrefix); err != nil {
		return fieldErr("topic_prefix", "%v", err)
	}
	for k, v := range c.Labels {
		if !isName(k, true) {
			return fieldErr("labels", "key %q does not match [A-Za-z0-9._-]{1,64}", k)
		}
		if len(v) > 256 || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return fieldErr("labels", "value of %q must be at most 256 printable bytes", k)
		}
	}
	if c.StateDir == "" {
		return fieldErr("state_dir", "must be set")
	}
	if c.Spool.Dir == "" {
		return fieldErr("spool.dir", "must be set")
	}
	if c.Spool.MaxCount <= 0 {
		return fieldErr("spool.max_count", "must be > 0, got %d", c.Spool.MaxCount)
	}
	if c.Spool.MaxBytes <= 0 {
		return fieldErr("spool.max_bytes", "must be > 0, got %d", c.Spool.MaxBytes)
	}
	if c.Heartbeat < time.Second || c.Heartbeat > time.Hour {
		return fieldErr("heartbeat_interval", "must be between 1s and 1h, got %v", c.Heartbeat)
	}
	if c.QueueSize < 0 || c.QueueSize > 100 {
		return fieldErr("queue_size", "must be between 0 and 100, got %d", c.QueueSize)
	}
	if err := c.Policy.validate(); err != nil {
		return err
	}
	if c.Signing.HMACKeyFile != "" && c.Signing.Ed25519PublicKeyFile != "" {
		return fieldErr("signing.ed25519_public_key_file", "set both hmac_key_file and ed25519_public_key_file; keep one")
	}
	if c.Signing.Required() && c.Signing.HMACKeyFile == "" && c.Signing.Ed25519PublicKeyFile == "" {
		return fieldErr("signing.require_signature", "true, but no hmac_key_file or ed25519_public_key_file is set")
	}
	if _, err := c.Signing.Verifier(); err != nil {
		key := "signing.hmac_key_file"
		if c.Signing.Ed25519PublicKeyFile != "" {
			key = "signing.ed25519_public_key_file"
		}
		return fieldErr(key, "%v", err)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return fieldErr("log_level", "must be debug, info, warn or error, got %q", c.LogLevel)
	}
	return nil
}

func (p *PolicyConfig) validate() error {
	if len(p.Allow) == 0 {
		return fieldErr("policy.allow", "must list at least one CIDR, address or host")
	}
	for _, a := range p.Allow {
		if _, _, err := parseAllowEntry(a); err != nil {
			return fieldErr("policy.allow", "%v", err)
		}
	}
	ints := []struct {
		key string
		v   int64
	}{
		{"policy.max_connections", int64(p.MaxConnections)},
		{"policy.max_requests", p.MaxRequests},
		{"policy.max_repeat", int64(p.MaxRepeat)},
		{"policy.max_body_bytes", int64(p.MaxBodyBytes)},
		{"policy.max_headers", int64(p.MaxHeaders)},
		{"policy.max_header_bytes", int64(p.MaxHeaderBytes)},
	}
	for _, f := range ints {
		if f.v <= 0 {
			return fieldErr(f.key, "must be > 0, got %d", f.v)
		}
	}
	if p.MaxDuration <= 0 {
		return fieldErr("policy.max_duration", "must be > 0, got %v", p.MaxDuration)
	}
	if !(p.MaxRate > 0) {
		return fieldErr("policy.max_rate", "must be > 0, got %v", p.MaxRate)
	}
	if p.ServeRoot != "" {
		if !filepath.IsAbs(p.ServeRoot) {
			return fieldErr("policy.serve_root", "%q must be an absolute path", p.ServeRoot)
		}
		if st, err := os.Stat(p.ServeRoot); err != nil || !st.IsDir() {
			return fieldErr("policy.serve_root", "%q is not a folder", p.ServeRoot)
		}
	}
	return nil
}

func checkBrokerURL(raw string) error {
	if raw == "" {
		return errors.New("must be set")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("cannot parse %q as a URL", raw)
	}
	switch u.Scheme {
	case "tcp", "ssl", "mqtt", "mqtts", "ws", "wss":
	default:
		return fmt.Errorf("scheme of %q must be tcp, ssl, mqtt, mqtts, ws or wss", raw)
	}
	if u.Hostname() == "" {
		return fmt.Errorf("%q has no host", raw)
	}
	if u.User != nil {
		return fmt.Errorf("%q carries user info: use broker.username and broker.password_file", u.Redacted())
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("port of %q must be 1-65535", raw)
		}
	}
	return nil
}

func checkTopicPrefix(s string) error {
	if s == "" {
		return errors.New("must be set")
	}
	if strings.ContainsAny(s, "+#\x00") {
		return fmt.Errorf("%q must not hold +, # or NUL", s)
	}
	if slices.Contains(strings.Split(s, "/"), "") {
		return fmt.Errorf("%q must not have empty levels or a leading or trailing /", s)
	}
	return nil
}

func checkReadable(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("not readable: %v", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("not readable: %v", err)
	}
	if st.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	return nil
}
