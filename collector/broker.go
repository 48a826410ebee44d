package collector

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strings"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"
	"golang.org/x/crypto/bcrypt"
	"gopkg.in/yaml.v3"

	"github.com/edgebench/edgebench/transport"
)

// Accounts are who may connect to the embedded broker: the collector's
// own account, which may publish commands and acks and read everything
// under the prefix, and one account per device, confined to its topics.
//
// The file (--accounts) is YAML:
//
//	collector: {username: collector, password: s3cret}
//	devices:
//	  - {fleet: lab, id: pi-1, password_bcrypt: "$2a$10$..."}
//	  - {fleet: lab, id: pi-2, username: pi-2, password: other, client_id: pi-2}
//
// A device's username defaults to its id and its MQTT client id must be
// the transport default, edgebench-<fleet>-<id>, unless client_id says
// otherwise: a client id names a persistent session, and taking over
// another device's session would hand over its subscriptions.
type Accounts struct {
	Collector Account   `yaml:"collector"`
	Devices   []Account `yaml:"devices"`
}

// Account is one login. Exactly one of Password (plain text, compared in
// constant time) and PasswordBcrypt is set.
type Account struct {
	Username       string `yaml:"username"`
	Password       string `yaml:"password"`
	PasswordBcrypt string `yaml:"password_bcrypt"`
	Fleet          string `yaml:"fleet"`
	ID             string `yaml:"id"`
	ClientID       string `yaml:"client_id"`
}

// LoadAccounts reads and checks an accounts file.
func LoadAccounts(path string) (*Accounts, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("accounts: %w", err)
	}
	var a Accounts
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&a); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("accounts %s: %w", path, err)
	}
	if err := a.check(); err != nil {
		return nil, fmt.Errorf("accounts %s: %w", path, err)
	}
	return &a, nil
}

func (a *Accounts) check() error {
	if a.Collector.Username == "" {
		return errors.New("no collector account")
	}
	if err := a.Collector.checkSecret(); err != nil {
		return fmt.Errorf("collector account: %w", err)
	}
	seen := map[string]bool{a.Collector.Username: true}
	for i := range a.Devices {
		d := &a.Devices[i]
		if err := transport.ValidID(d.Fleet); err != nil {
			return fmt.Errorf("device %d: fleet: %w", i+1, err)
		}
		if err := transport.ValidID(d.ID); err != nil {
			return fmt.Errorf("device %d: id: %w", i+1, err)
		}
		if d.Username == "" {
			d.Username = d.ID
		}
		if d.ClientID == "" {
			d.ClientID = "edgebench-" + d.Fleet + "-" + d.ID
		}
		if seen[d.Username] {
			return fmt.Errorf("device %s/%s: username %q used twice", d.Fleet, d.ID, d.Username)
		}
		seen[d.Username] = true
		if err := d.checkSecret(); err != nil {
			return fmt.Errorf("device %s/%s: %w", d.Fleet, d.ID, err)
		}
	}
	return nil
}

func (a *Account) checkSecret() error {
	if (a.Password == "") == (a.PasswordBcrypt == "") {
		return errors.New("want exactly one of password and password_bcrypt")
	}
	return nil
}

// verify checks a password against the account's secret.
func (a *Account) verify(pw []byte) bool {
	if a.PasswordBcrypt != "" {
		return bcrypt.CompareHashAndPassword([]byte(a.PasswordBcrypt), pw) == nil
	}
	// Hash both sides so the comparison's time does not depend on length.
	x, y := sha256.Sum256(pw), sha256.Sum256([]byte(a.Password))
	return subtle.ConstantTimeCompare(x[:], y[:]) == 1
}

// aclHook authenticates clients against Accounts and confines devices to
// their own topics (SPEC section 6): a device publishes only its status,
// event, result and heartbeat and reads only its cmd, its fleet's _all cmd
// and its ack. Only the collector account publishes cmd and ack.
type aclHook struct {
	mqtt.HookBase
	prefix    string
	collector Account
	devices   map[string]Account // by username
}

func newACLHook(a *Accounts, prefix string) *aclHook {
	h := &aclHook{prefix: prefix, collector: a.Collector, devices: map[string]Account{}}
	for _, d := range a.Devices {
		h.devices[d.Username] = d
	}
	return h
}

// ID names the hook.
func (h *aclHook) ID() string { return "edgebench-acl" }

// Provides says which hook methods are implemented.
func (h *aclHook) Provides(b byte) bool {
	return b == mqtt.OnConnectAuthenticate || b == mqtt.OnACLCheck
}

// OnConnectAuthenticate admits the collector and known devices with the
// right password (and, for devices, their own client id).
func (h *aclHook) OnConnectAuthenticate(cl *mqtt.Client, pk packets.Packet) bool {
	user := string(pk.Connect.Username)
	if user == "" {
		return false
	}
	if user == h.collector.Username {
		return h.collector.verify(pk.Connect.Password)
	}
	d, ok := h.devices[user]
	if !ok || !d.verify(pk.Connect.Password) {
		return false
	}
	return cl.ID == d.ClientID
}

// OnACLCheck allows the collector everything and a device its own topics.
func (h *aclHook) OnACLCheck(cl *mqtt.Client, topic string, write bool) bool {
	user := string(cl.Properties.Username)
	if user == h.collector.Username {
		return true
	}
	d, ok := h.devices[user]
	if !ok {
		return false
	}
	own := h.prefix + "/" + d.Fleet + "/" + d.ID + "/"
	if write {
		kind, ok := strings.CutPrefix(topic, own)
		if !ok {
			return false
		}
		switch transport.Kind(kind) {
		case transport.TopicStatus, transport.TopicEvent, transport.TopicResult, transport.TopicHeartbeat:
			return true
		}
		return false
	}
	return topic == own+string(transport.TopicCmd) || topic == own+string(transport.TopicAck) ||
		topic == h.prefix+"/"+d.Fleet+"/"+transport.AllDevices+"/"+string(transport.TopicCmd)
}

// brokerTLS is the embedded broker's TLS configuration, nil without a
// certificate.
func brokerTLS(certFile, keyFile, clientCAFile string) (*tls.Config, error) {
	if certFile == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("broker tls: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if clientCAFile != "" {
		pem, err := os.ReadFile(clientCAFile)
		if err != nil {
			return nil, fmt.Errorf("broker tls: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("broker tls: no certificate in %s", clientCAFile)
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// startBroker starts the embedded mochi broker on addr with the ACL hook,
// over TLS when tlsCfg is set. own is the address the collector's own
// client dials: addr itself, or with TLS a plain listener on a free
// loopback port.
func startBroker(addr string, tlsCfg *tls.Config, a *Accounts, prefix string, log *slog.Logger) (srv *mqtt.Server, own string, err error) {
	// MQTT 3.1.1 has no flow control: what the collector has not acked
	// yet waits in the broker, and mochi drops QoS 1 messages for a client
	// past MaximumInflight (8,192 by default). Allow as many as packet ids
	// go, so a fleet's burst waits for the ingest instead of coming back
	// only at each device's resend.
	caps := mqtt.NewDefaultServerCapabilities()
	caps.MaximumInflight = math.MaxUint16
	srv = mqtt.New(&mqtt.Options{Logger: log, Capabilities: caps})
	if err := srv.AddHook(newACLHook(a, prefix), nil); err != nil {
		return nil, "", fmt.Errorf("broker: %w", err)
	}
	main := listeners.NewTCP(listeners.Config{ID: "tcp", Address: addr, TLSConfig: tlsCfg})
	if err := srv.AddListener(main); err != nil {
		return nil, "", fmt.Errorf("broker listen %s: %w", addr, err)
	}
	own = main.Address()
	if tlsCfg != nil {
		local := listeners.NewTCP(listeners.Config{ID: "collector", Address: "127.0.0.1:0"})
		if err := srv.AddListener(local); err != nil {
			srv.Close()
			return nil, "", fmt.Errorf("broker listen for the collector: %w", err)
		}
		own = local.Address()
	}
	if err := srv.Serve(); err != nil {
		srv.Close()
		return nil, "", fmt.Errorf("broker: %w", err)
	}
	return srv, own, nil
}
