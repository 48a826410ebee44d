package agent

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/edgebench/edgebench/internal/cli"
)

// Config is the agent's configuration: a YAML file, then EDGEBENCH_*
// environment variables, then command-line flags, each overriding the one
// before. Every field has one key (its YAML path, e.g.
// "policy.max_connections"); the environment variable is EDGEBENCH_ plus the
// key in upper case with dots as underscores (EDGEBENCH_POLICY_MAX_CONNECTIONS)
// and the flag is the key with dots and underscores as dashes
// (-policy-max-connections). Lists and maps are comma separated there
// ("127.0.0.0/8,::1", "server=nginx,build=gcc-9.3"); an empty variable is
// taken as unset.
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
	Dir      string   `yaml:"dir" help:"spool directory"`
	MaxCount int      `yaml:"max_count" help:"most results kept in the spool"`
	MaxBytes ByteSize `yaml:"max_bytes" help:"most bytes kept in the spool (e.g. 64MiB)"`
}

// PolicyConfig is what a remote command may ask of this device; see Policy.
type PolicyConfig struct {
	Allow          []string      `yaml:"allow" help:"target allowlist: CIDRs, IP addresses or host names"`
	MaxConnections int           `yaml:"max_connections" help:"most connections a run may open"`
	MaxDuration    time.Duration `yaml:"max_duration" help:"longest run duration (and warm-up, and timeout)"`
	MaxRate        float64       `yaml:"max_rate" help:"highest open-loop rate, requests/s"`
	MaxRequests    int64         `yaml:"max_requests" help:"most requests a run may send"`
	MaxRepeat      int           `yaml:"max_repeat" help:"most repetitions of a run"`
	MaxBodyBytes   ByteSize      `yaml:"max_body_bytes" help:"largest request body"`
	MaxHeaders     int           `yaml:"max_headers" help:"most extra request headers"`
	MaxHeaderBytes ByteSize      `yaml:"max_header_bytes" help:"largest total size of the extra request headers"`
	ServeRoot      string        `yaml:"serve_root" help:"folder below which the serve command may serve files (default none: the synthetic endpoints only)"`
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
func (s SigningConfig) Verifier() (Verifier, error) {
	switch {
	case s.HMACKeyFile != "":
		return LoadHMACVerifier(s.HMACKeyFile)
	case s.Ed25519PublicKeyFile != "":
		return LoadEd25519Verifier(s.Ed25519PublicKeyFile)
	}
	return nil, nil
}

// ByteSize is a count of bytes; in text it may carry a suffix: k, KB, KiB,
// M, MB, MiB, G, GB, GiB (k, M and G are powers of 1024, as KiB).
type ByteSize int64

// ParseByteSize parses "1048576", "64MiB", "1.5G" or "512k".
func ParseByteSize(s string) (ByteSize, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' && r != '-' && r != '+' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = strings.TrimSpace(t[:i]), strings.TrimSpace(t[i:])
	}
	mult, ok := map[string]float64{
		"": 1, "b": 1, "B": 1,
		"k": 1 << 10, "K": 1 << 10, "KiB": 1 << 10, "KB": 1e3, "kB": 1e3,
		"M": 1 << 20, "MiB": 1 << 20, "MB": 1e6,
		"G": 1 << 30, "GiB": 1 << 30, "GB": 1e9,
	}[unit]
	if !ok || num == "" {
		return 0, fmt.Errorf("cannot parse %q as a byte size (e.g. 1048576, 64MiB)", s)
	}
	if !strings.Contains(num, ".") {
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("cannot parse %q as a byte size (e.g. 1048576, 64MiB)", s)
		}
		return ByteSize(n * int64(mult)), nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f*mult > 1<<62 || f*mult < -(1<<62) {
		return 0, fmt.Errorf("cannot parse %q as a byte size (e.g. 1048576, 64MiB)", s)
	}
	return ByteSize(f * mult), nil
}

// String returns the size in the largest binary unit that divides it.
func (b ByteSize) String() string {
	for _, u := range []struct {
		n    ByteSize
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if b != 0 && b%u.n == 0 {
			return strconv.FormatInt(int64(b/u.n), 10) + u.name
		}
	}
	return strconv.FormatInt(int64(b), 10)
}

// UnmarshalYAML reads a byte size from a YAML scalar.
func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: want a byte size, got a %s", n.Line, kindName(n.Kind))}}
	}
	v, err := ParseByteSize(n.Value)
	if err != nil {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %v", n.Line, err)}}
	}
	*b = v
	return nil
}

// MarshalYAML writes the size as String does.
func (b ByteSize) MarshalYAML() (any, error) { return b.String(), nil }

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

// EnvPrefix starts the name of every environment variable the config reads.
const EnvPrefix = "EDGEBENCH_"

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
func LoadConfigWithFlags(path string, getenv func(string) string, flags *ConfigFlags) (*Config, error) {
	l := loader{getenv: getenv, hostname: os.Hostname}
	return l.load(path, flags)
}

type loader struct {
	getenv   func(string) string
	hostname func() (string, error)
}

func (l loader) load(path string, flags *ConfigFlags) (*Config, error) {
	c := DefaultConfig()
	src := map[string]string{} // key -> where its value came from
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read config: %w", err)
		}
		if err := decodeYAML(path, data, c, src); err != nil {
			return nil, err
		}
	}
	fields := configFields(c)
	if l.getenv != nil {
		for _, f := range fields {
			name := f.envName()
			raw := l.getenv(name)
			if raw == "" {
				continue
			}
			if err := setField(f.v, raw, true); err != nil {
				return nil, fmt.Errorf("%s: %s: %v", name, f.key, err)
			}
			src[f.key] = name
		}
	}
	if flags != nil {
		byKey := map[string]field{}
		for _, f := range fields {
			byKey[f.key] = f
		}
		fresh := map[string]bool{}
		for _, fv := range flags.set {
			f := byKey[fv.key]
			if err := setField(f.v, fv.raw, !fresh[fv.key]); err != nil {
				return nil, fmt.Errorf("flag -%s: %v", f.flagName(), err)
			}
			fresh[fv.key] = true
			src[f.key] = "flag -" + f.flagName()
		}
	}
	where := func(key string) string {
		if s, ok := src[key]; ok {
			return s
		}
		if path != "" {
			return path
		}
		return "config"
	}
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
		var fe *FieldError
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

// FieldError is a bad value of one config field.
type FieldError struct {
	Field string // the key, e.g. "policy.max_connections"
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

func fieldErr(key, format string, a ...any) error {
	return &FieldError{Field: key, Msg: fmt.Sprintf(format, a...)}
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

// decodeYAML decodes data over c with unknown fields refused, and records in
// src the file and line each key came from. Errors name the file, the line
// and the field.
func decodeYAML(path string, data []byte, c *Config, src map[string]string) error {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return fmt.Errorf("%s: %s", path, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(root.Content) == 0 {
		return nil // empty file: all defaults
	}
	lines := map[int]string{} // line of a value -> key
	var walk func(n *yaml.Node, prefix string)
	walk = func(n *yaml.Node, prefix string) {
		if n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			key := k.Value
			if prefix != "" {
				key = prefix + "." + k.Value
			}
			if prefix == "labels" {
				continue
			}
			src[key] = fmt.Sprintf("%s line %d", path, k.Line)
			lines[k.Line] = key
			if v.Kind == yaml.SequenceNode {
				for _, item := range v.Content {
					lines[item.Line] = key
				}
			}
			walk(v, key)
		}
	}
	walk(root.Content[0], "")

	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	err := dec.Decode(c)
	if err == nil || errors.Is(err, io.EOF) {
		return nil
	}
	var te *yaml.TypeError
	if !errors.As(err, &te) || len(te.Errors) == 0 {
		return fmt.Errorf("%s: %s", path, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	return fmt.Errorf("%s", explainYAMLError(path, te.Errors[0], lines))
}

// yamlREs are compiled when a config error needs them, not at start-up.
var yamlREs = sync.OnceValue(func() [3]*regexp.Regexp {
	return [3]*regexp.Regexp{
		regexp.MustCompile(`^line (\d+): (.*)$`),
		regexp.MustCompile(`^field (\S+) not found in type`),
		regexp.MustCompile("^cannot unmarshal !!(\\w+)(?: `(.*)`)? into (\\S+)$"),
	}
})

func explainYAMLError(path, msg string, lines map[int]string) string {
	re := yamlREs()
	yamlLineRE, yamlUnknownRE, yamlCannotRE := re[0], re[1], re[2]
	m := yamlLineRE.FindStringSubmatch(msg)
	if m == nil {
		return path + ": " + msg
	}
	line, _ := strconv.Atoi(m[1])
	rest := m[2]
	prefix := fmt.Sprintf("%s line %d: ", path, line)
	key := lines[line]
	if u := yamlUnknownRE.FindStringSubmatch(rest); u != nil {
		if key == "" {
			key = u[1]
		}
		return prefix + fmt.Sprintf("unknown field %q", key)
	}
	if c := yamlCannotRE.FindStringSubmatch(rest); c != nil {
		want := c[3]
		switch want {
		case "time.Duration":
			want = "a duration (e.g. 30s, 5m)"
		case "int", "int64":
			want = "an integer"
		case "float64":
			want = "a number"
		case "bool", "*bool":
			want = "true or false"
		case "string":
			want = "a string"
		default:
			if strings.HasPrefix(want, "[]") {
				want = "a list"
			} else if strings.HasPrefix(want, "map[") || strings.HasPrefix(want, "agent.") {
				want = "a mapping"
			}
		}
		got := c[2]
		if got == "" {
			got = map[string]string{"seq": "a list", "map": "a mapping"}[c[1]]
			if got == "" {
				got = "a " + c[1]
			}
		} else {
			got = strconv.Quote(got)
		}
		rest = fmt.Sprintf("want %s, got %s", want, got)
	}
	if key != "" {
		return prefix + key + ": " + rest
	}
	return prefix + rest
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "mapping"
	case yaml.AliasNode:
		return "alias"
	}
	return "scalar"
}

// field is one settable leaf of Config.
type field struct {
	key  string
	help string
	v    reflect.Value // addressable
}

func (f field) envName() string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(f.key, ".", "_"))
}

func (f field) flagName() string {
	return strings.NewReplacer(".", "-", "_", "-").Replace(f.key)
}

// configFields lists the leaves of c by key, in declaration order.
func configFields(c *Config) []field {
	var out []field
	var walk func(v reflect.Value, prefix string)
	walk = func(v reflect.Value, prefix string) {
		t := v.Type()
		for i := range t.NumField() {
			sf := t.Field(i)
			name, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
			if name == "" || name == "-" {
				continue
			}
			key := name
			if prefix != "" {
				key = prefix + "." + name
			}
			fv := v.Field(i)
			if sf.Type.Kind() == reflect.Struct {
				walk(fv, key)
				continue
			}
			out = append(out, field{key: key, help: sf.Tag.Get("help"), v: fv})
		}
	}
	walk(reflect.ValueOf(c).Elem(), "")
	return out
}

var durationType = reflect.TypeFor[time.Duration]()
var byteSizeType = reflect.TypeFor[ByteSize]()

// setField parses raw into v. For lists and maps, replace says whether raw
// replaces the value or adds to it.
func setField(v reflect.Value, raw string, replace bool) error {
	switch {
	case v.Type() == durationType:
		d, err := cli.ParseDuration(raw)
		if err != nil {
			return fmt.Errorf("cannot parse %q as a duration (e.g. 30s, 5m, or 30 for seconds)", raw)
		}
		v.SetInt(int64(d))
	case v.Type() == byteSizeType:
		b, err := ParseByteSize(raw)
		if err != nil {
			return err
		}
		v.SetInt(int64(b))
	case v.Kind() == reflect.String:
		v.SetString(raw)
	case v.Kind() == reflect.Int || v.Kind() == reflect.Int64:
		n, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
		if err != nil {
			return fmt.Errorf("cannot parse %q as an integer", raw)
		}
		v.SetInt(n)
	case v.Kind() == reflect.Float64:
		f, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
		if err != nil {
			return fmt.Errorf("cannot parse %q as a number", raw)
		}
		v.SetFloat(f)
	case v.Kind() == reflect.Pointer && v.Type().Elem().Kind() == reflect.Bool:
		b, err := strconv.ParseBool(strings.TrimSpace(raw))
		if err != nil {
			return fmt.Errorf("cannot parse %q as true or false", raw)
		}
		v.Set(reflect.ValueOf(&b))
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.String:
		var list []string
		if !replace {
			list = v.Interface().([]string)
		}
		for _, s := range strings.Split(raw, ",") {
			if s = strings.TrimSpace(s); s != "" {
				list = append(list, s)
			}
		}
		v.Set(reflect.ValueOf(slices.Clip(list)))
	case v.Kind() == reflect.Map:
		m := map[string]string{}
		if !replace {
			maps := v.Interface().(map[string]string)
			for k, x := range maps {
				m[k] = x
			}
		}
		for _, kv := range strings.Split(raw, ",") {
			if kv = strings.TrimSpace(kv); kv == "" {
				continue
			}
			k, x, ok := strings.Cut(kv, "=")
			if !ok || strings.TrimSpace(k) == "" {
				return fmt.Errorf("%q is not key=value", kv)
			}
			m[strings.TrimSpace(k)] = strings.TrimSpace(x)
		}
		v.Set(reflect.ValueOf(m))
	default:
		return fmt.Errorf("unsupported field type %s", v.Type())
	}
	return nil
}

// ConfigFlags holds the config overrides given on the command line; see
// BindConfigFlags.
type ConfigFlags struct {
	set []flagSetting
}

type flagSetting struct{ key, raw string }

// BindConfigFlags defines one flag per config key on fs (e.g.
// -broker-url, -device-id, -policy-max-connections, -labels k=v,k2=v2;
// a list or map flag given twice adds to itself) and returns the collector
// of the values given. Pass it to LoadConfigWithFlags after fs.Parse.
func BindConfigFlags(fs *flag.FlagSet) *ConfigFlags {
	cf := &ConfigFlags{}
	def := DefaultConfig()
	for _, f := range configFields(def) {
		fs.Var(&configFlag{cf: cf, key: f.key, def: valueText(f.v), typ: typeWord(f.v)}, f.flagName(), f.help)
	}
	return cf
}

// Keys returns the keys set by flags, sorted.
func (cf *ConfigFlags) Keys() []string {
	var keys []string
	for _, s := range cf.set {
		keys = append(keys, s.key)
	}
	sort.Strings(keys)
	return slices.Compact(keys)
}

type configFlag struct {
	cf  *ConfigFlags
	key string
	def string
	typ string // what the usage calls the value; "bool" for a boolean
}

func (f *configFlag) String() string {
	if f == nil {
		return ""
	}
	return f.def
}

func (f *configFlag) Set(s string) error {
	// Parse now so that a bad flag is reported by the flag package.
	tmp := DefaultConfig()
	for _, fl := range configFields(tmp) {
		if fl.key == f.key {
			if err := setField(fl.v, s, true); err != nil {
				return err
			}
		}
	}
	f.cf.set = append(f.cf.set, flagSetting{key: f.key, raw: s})
	return nil
}

func (f *configFlag) IsBoolFlag() bool { return f.typ == "bool" }

// Type names the value in a usage (spf13/pflag's Value).
func (f *configFlag) Type() string { return f.typ }

func typeWord(v reflect.Value) string {
	switch {
	case v.Type() == durationType:
		return "duration"
	case v.Type() == byteSizeType:
		return "size"
	case v.Kind() == reflect.Pointer:
		return "bool"
	case v.Kind() == reflect.Slice:
		return "list"
	case v.Kind() == reflect.Map:
		return "k=v,..."
	case v.Kind() == reflect.Float64:
		return "float"
	case v.Kind() == reflect.Int || v.Kind() == reflect.Int64:
		return "int"
	}
	return "string"
}

func valueText(v reflect.Value) string {
	switch {
	case v.Type() == durationType:
		if v.Int() == 0 {
			return ""
		}
		return time.Duration(v.Int()).String()
	case v.Type() == byteSizeType:
		return ByteSize(v.Int()).String()
	case v.Kind() == reflect.Slice:
		return strings.Join(v.Interface().([]string), ",")
	case v.Kind() == reflect.Map, v.Kind() == reflect.Pointer:
		return ""
	case v.Kind() == reflect.Int || v.Kind() == reflect.Int64:
		if v.Int() == 0 {
			return ""
		}
		return strconv.FormatInt(v.Int(), 10)
	case v.Kind() == reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	}
	return v.String()
}
