package broker

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
	"net"
	"os"
	"strings"
	"sync/atomic"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"
	"go.uber.org/zap"
	"go.yaml.in/yaml/v3"
	"golang.org/x/crypto/bcrypt"

	"github.com/edgebench/edgebench/transport"
	"github.com/edgebench/edgebench/wire"
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
// otherwise, or edgebench-<fleet>-<id>/run (`edgebench run --publish`): a
// client id names a persistent session, and taking over another device's
// session would hand over its subscriptions.
type Accounts struct {
	Collector Account   `yaml:"collector"`
	Devices   []Account `yaml:"devices"`
	Quota     Quota     `yaml:"quota"` // every device's, over DefaultQuota() (quota.go)
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
	Quota          *Quota `yaml:"quota"` // a device's own, over Accounts.Quota
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
	if err := a.Check(); err != nil {
		return nil, fmt.Errorf("accounts %s: %w", path, err)
	}
	return &a, nil
}

// Check checks the accounts and fills in what a device's account leaves
// out: its username (its id) and its client id. LoadAccounts checks
// them; Start takes checked accounts.
func (a *Accounts) Check() error {
	if a.Collector.Username == "" {
		return errors.New("no collector account")
	}
	if err := a.Collector.checkSecret(); err != nil {
		return fmt.Errorf("collector account: %w", err)
	}
	seen := map[string]bool{a.Collector.Username: true}
	// A client id names a persistent session; two devices that may both
	// connect with one id could take over each other's session. Derived
	// ids can meet across fleets: edgebench-a-b-c is fleet a-b's device c
	// and fleet a's device b-c.
	clientOf := map[string]string{}
	if err := a.checkQuotas(); err != nil {
		return err
	}
	for i := range a.Devices {
		d := &a.Devices[i]
		if err := wire.ValidID(d.Fleet); err != nil {
			return fmt.Errorf("device %d: fleet: %w", i+1, err)
		}
		if err := wire.ValidID(d.ID); err != nil {
			return fmt.Errorf("device %d: id: %w", i+1, err)
		}
		if d.Username == "" {
			d.Username = d.ID
		}
		if d.ClientID == "" {
			d.ClientID = transport.DeviceClientID(d.Fleet, d.ID)
		}
		who := d.Fleet + "/" + d.ID
		for _, id := range []string{d.ClientID, transport.RunClientID(d.Fleet, d.ID)} {
			if other, ok := clientOf[id]; ok {
				return fmt.Errorf("device %s: client id %q is also device %s's; give one of them another client_id", who, id, other)
			}
			clientOf[id] = who
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
// event, result and heartbeat and reads only its cmd, its fleet's _all cmd,
// its ack and the collector's status. Only the collector account publishes
// cmd, ack and the collector's status. A Last Will is a publish like any
// other: a client whose Will names a topic it may not publish to is
// refused at CONNECT, and such a Will is never sent.
type aclHook struct {
	mqtt.HookBase
	prefix    string
	collector Account
	devices   map[string]Account // by username
	dummy     Account            // checked for unknown users (dummyAccount)
	logins    *logins
	refused   *refusals
}

func newACLHook(a *Accounts, prefix string, refused *refusals) *aclHook {
	h := &aclHook{prefix: prefix, collector: a.Collector, devices: map[string]Account{}, dummy: dummyAccount(a),
		logins: newLogins(LoginLimits{}), refused: refused}
	for _, d := range a.Devices {
		h.devices[d.Username] = d
	}
	return h
}

// ID names the hook.
func (h *aclHook) ID() string { return "edgebench-acl" }

// Provides says which hook methods are implemented.
func (h *aclHook) Provides(b byte) bool {
	switch b {
	case mqtt.OnConnectAuthenticate, mqtt.OnACLCheck, mqtt.OnWill, mqtt.OnDisconnect:
		return true
	}
	return false
}

// OnConnectAuthenticate admits the collector and known devices with the
// right password (and, for devices, their own client id) whose Will, if
// any, is on a topic they may publish to. Refusals are logged.
func (h *aclHook) OnConnectAuthenticate(cl *mqtt.Client, pk packets.Packet) bool {
	reason := h.login(cl, pk)
	var fields []zap.Field
	if reason == "" && pk.Connect.WillFlag && !h.mayPublish(cl, pk.Connect.WillTopic) {
		reason, fields = "Last Will on a topic the account may not publish to", []zap.Field{zap.String("will_topic", wire.Clip(pk.Connect.WillTopic))}
	}
	if reason != "" {
		// MQTT 3.1.1 clients read "not authorized" (mochi maps its bad
		// user name or password to return code 5).
		h.refused.note(cl.ID, string(pk.Connect.Username), cl.Net.Remote, reason, fields...)
		return false
	}
	loggedIn(cl.Net.Conn)
	return true
}

// login checks a CONNECT's credentials: "" when they are right, else why
// not. Failed logins are throttled by source address and user name
// (logins); an unknown user's password is checked against a dummy hash,
// so that its refusal takes as long as a known one's.
func (h *aclHook) login(cl *mqtt.Client, pk packets.Packet) string {
	user := string(pk.Connect.Username)
	if user == "" {
		return "no user name"
	}
	src := sourceOf(cl.Net.Remote)
	known := h.logins.isKnown(src, user)
	if !known {
		if why := h.logins.throttled(src, user); why != "" {
			return why
		}
	}
	acc, ok := h.devices[user]
	isCollector := user == h.collector.Username
	if isCollector {
		acc, ok = h.collector, true
	}
	if !ok {
		acc = h.dummy
	}
	// Failures of others may have throttled the address or the user
	// while this login waited for its turn.
	var late string
	verify := func() bool {
		if !known {
			if late = h.logins.throttled(src, user); late != "" {
				return false
			}
		}
		return acc.verify(pk.Connect.Password)
	}
	right, turn := true, true
	if acc.PasswordBcrypt != "" {
		right, turn = h.logins.check(known, verify)
	} else { // a plain password costs a hash: no turn to wait for
		right = verify()
	}
	switch {
	case late != "":
		return late
	case !turn:
		return "too many logins at once: try again"
	case !ok:
		h.logins.failed(src, user)
		return "unknown user"
	case !right:
		h.logins.failed(src, user)
		return "wrong password"
	case !isCollector && cl.ID != acc.ClientID && cl.ID != transport.RunClientID(acc.Fleet, acc.ID): // the agent, or `edgebench run --publish`
		return "client id is not the device's (" + acc.ClientID + ")"
	}
	h.logins.succeeded(src, user)
	return ""
}

// OnACLCheck allows the collector everything and a device its own topics.
func (h *aclHook) OnACLCheck(cl *mqtt.Client, topic string, write bool) bool {
	if write {
		return h.mayPublish(cl, topic)
	}
	user := string(cl.Properties.Username)
	if user == h.collector.Username {
		return true
	}
	d, ok := h.devices[user]
	if !ok {
		return false
	}
	own := h.prefix + "/" + d.Fleet + "/" + d.ID + "/"
	return topic == own+string(wire.TopicCmd) || topic == own+string(wire.TopicAck) ||
		topic == h.prefix+"/"+d.Fleet+"/"+wire.AllDevices+"/"+string(wire.TopicCmd) ||
		topic == wire.Topics{Prefix: h.prefix}.CollectorStatus()
}

// mayPublish reports whether cl's account may publish to topic: the
// collector anywhere, a device its own status, event, result and
// heartbeat.
func (h *aclHook) mayPublish(cl *mqtt.Client, topic string) bool {
	user := string(cl.Properties.Username)
	if user == h.collector.Username {
		return true
	}
	d, ok := h.devices[user]
	if !ok {
		return false
	}
	kind, ok := strings.CutPrefix(topic, h.prefix+"/"+d.Fleet+"/"+d.ID+"/")
	if !ok {
		return false
	}
	switch wire.Kind(kind) {
	case wire.TopicStatus, wire.TopicEvent, wire.TopicResult, wire.TopicHeartbeat:
		return true
	}
	return false
}

// refusedWill is where a Will the ACL does not allow would go: mochi
// publishes whatever OnWill returns, and a hook cannot cancel a Will. No
// device may read $SYS topics, and wildcards do not match them.
const refusedWill = "$SYS/edgebench/refused-will"

// OnWill checks the ACL again as the Will is sent: one it does not allow
// (none should get past CONNECT) is replaced by an empty, unretained
// message on refusedWill.
func (h *aclHook) OnWill(cl *mqtt.Client, will mqtt.Will) (mqtt.Will, error) {
	if h.mayPublish(cl, will.TopicName) {
		return will, nil
	}
	h.refused.note(cl.ID, string(cl.Properties.Username), cl.Net.Remote, "Last Will on a topic the account may not publish to, not sent",
		zap.String("will_topic", wire.Clip(will.TopicName)))
	return mqtt.Will{TopicName: refusedWill, Flag: will.Flag}, nil
}

// OnDisconnect logs a client disconnected for a packet over the size cap.
func (h *aclHook) OnDisconnect(cl *mqtt.Client, err error, _ bool) {
	if errors.Is(err, packets.ErrPacketTooLarge) {
		h.refused.note(cl.ID, string(cl.Properties.Username), cl.Net.Remote, fmt.Sprintf("disconnected: a packet over the %d-byte cap", maxPacket))
	}
}

// LoadTLS is the embedded broker's TLS configuration from its
// certificate and key files and, to require client certificates, the CA
// that signs them: nil without a certificate.
func LoadTLS(certFile, keyFile, clientCAFile string) (*tls.Config, error) {
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

// Config configures the embedded broker.
type Config struct {
	Listen   string      // its address
	TLS      *tls.Config // nil: plain TCP
	Accounts *Accounts   // who may connect, checked (Accounts.Check)
	Prefix   string      // the topics' prefix
	Limits   Limits
	Log      *zap.Logger
	// Refused, when set, counts every login, connection and packet the
	// broker refuses (the collector's edgebench_broker_refused_total).
	Refused *atomic.Int64
}

// Start starts the embedded mochi broker on cfg.Listen with the ACL hook
// and the limits, over TLS when cfg.TLS is set. Its Addr is the address
// the collector's own client dials: Listen itself, or with TLS a plain
// listener on a free loopback port.
func Start(cfg Config) (*Broker, error) {
	addr, tlsCfg, a, prefix, lim, log := cfg.Listen, cfg.TLS, cfg.Accounts, cfg.Prefix, cfg.Limits, cfg.Log
	if err := a.Check(); err != nil {
		return nil, fmt.Errorf("broker: accounts: %w", err)
	}
	lim.fill()
	if log == nil {
		log = zap.NewNop()
	}
	// MQTT 3.1.1 has no flow control: what the collector has not acked
	// yet waits in the broker, and mochi drops QoS 1 messages for a client
	// past MaximumInflight (8,192 by default). Allow as many as packet ids
	// go, so a fleet's burst waits for the ingest instead of coming back
	// only at each device's resend.
	caps := mqtt.NewDefaultServerCapabilities()
	caps.MaximumInflight = math.MaxUint16
	caps.MaximumPacketSize = maxPacket
	b := &Broker{refused: newRefusals(log, lim.LogEvery, cfg.Refused)}
	b.srv = mqtt.New(&mqtt.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Capabilities: caps})
	acl := newACLHook(a, prefix, b.refused)
	acl.logins = newLogins(lim.Logins)
	if err := b.srv.AddHook(acl, nil); err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	listen := func(id, addr string, tlsCfg *tls.Config) (string, error) {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return "", err
		}
		g := newLoginGate(ln, tlsCfg, lim, b.refused)
		if err := b.srv.AddListener(listeners.NewNet(id, g)); err != nil {
			ln.Close()
			return "", err
		}
		b.gates = append(b.gates, g)
		return ln.Addr().String(), nil
	}
	var err error
	if b.own, err = listen("tcp", addr, tlsCfg); err != nil {
		return nil, fmt.Errorf("broker listen %s: %w", addr, err)
	}
	if tlsCfg != nil {
		if b.own, err = listen("collector", "127.0.0.1:0", nil); err != nil {
			b.Close()
			return nil, fmt.Errorf("broker listen for the collector: %w", err)
		}
	}
	if err := b.srv.Serve(); err != nil {
		b.Close()
		return nil, fmt.Errorf("broker: %w", err)
	}
	return b, nil
}

// Broker is the embedded broker.
type Broker struct {
	srv     *mqtt.Server
	own     string // the address the collector's own client dials
	refused *refusals
	gates   []*loginGate
}

// Addr is the address the collector's own client dials (host:port).
func (b *Broker) Addr() string { return b.own }

// Close stops the broker and writes the last count of refusals.
func (b *Broker) Close() error {
	for _, g := range b.gates {
		g.drain(2 * time.Second)
	}
	err := b.srv.Close()
	b.refused.stop()
	return err
}
