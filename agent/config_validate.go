package agent

// This file checks a loaded Config: every field's error names its key.

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/edgebench/edgebench/internal/config"
	"github.com/edgebench/edgebench/wire"
)

// fieldErr is a *config.FieldError: key's value is bad.
func fieldErr(key, format string, a ...any) error {
	return &config.FieldError{Field: key, Msg: fmt.Sprintf(format, a...)}
}

// isLabelKey reports whether s is 1 to 64 bytes of [A-Za-z0-9._-].
func isLabelKey(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// checkID checks a device or fleet id as SPEC 6 defines them (wire.ValidID),
// in the words of the config's errors.
func checkID(s string) error {
	if s == wire.AllDevices {
		return errors.New(`"_all" is reserved`)
	}
	if wire.ValidID(s) != nil {
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
		if !isLabelKey(k) {
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
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"policy.max_duration", p.MaxDuration}, {"policy.max_serve_duration", p.MaxServeDuration}, {"policy.max_watch_duration", p.MaxWatchDuration}} {
		if d.v <= 0 {
			return fieldErr(d.key, "must be > 0, got %v", d.v)
		}
	}
	if len(p.ServeAllow) == 0 {
		return fieldErr("policy.serve_allow", "must list at least one CIDR or address (127.0.0.0/8 and ::1 for loopback)")
	}
	for _, a := range p.ServeAllow {
		if _, err := parseServeAllow(a); err != nil {
			return fieldErr("policy.serve_allow", "%v", err)
		}
	}
	if p.FleetFile != "" {
		if _, err := openFleetFile(p.FleetFile); err != nil {
			return fieldErr("policy.fleet_file", "%v", strings.TrimPrefix(err.Error(), "policy.fleet_file: "))
		}
	}
	if !(p.MaxRate > 0) || math.IsInf(p.MaxRate, 0) {
		return fieldErr("policy.max_rate", "must be a finite number > 0 (requests/s), got %v", p.MaxRate)
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
	if p := u.Port(); p == "" && (strings.HasSuffix(u.Host, ":") || (u.Scheme != "ws" && u.Scheme != "wss")) {
		// The MQTT client dials host:port as it is: no default port,
		// and "host:" dials port 0.
		return fmt.Errorf("%q has no port: give one (1883, or 8883 for TLS)", raw)
	} else if p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("port of %q must be 1-65535", raw)
		}
	}
	return nil
}

// checkTopicPrefix checks the prefix by the wire's rule (wire.ValidPrefix,
// which transport.Dial applies too), in the words of the config's errors.
func checkTopicPrefix(s string) error {
	switch {
	case wire.ValidPrefix(s) == nil:
		return nil
	case s == "":
		return errors.New("must be set")
	case strings.ContainsAny(s, "+#\x00"):
		return fmt.Errorf("%q must not hold +, # or NUL", s)
	case strings.HasPrefix(s, "$"):
		return fmt.Errorf("%q must not start with $, which marks the broker's own topics", s)
	default:
		return fmt.Errorf("%q must not have empty levels or a leading or trailing /", s)
	}
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
