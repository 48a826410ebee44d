package testenv

import (
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/hooks/auth"
	"github.com/mochi-mqtt/server/v2/listeners"
)

// Broker is an in-process mochi MQTT broker on a loopback address that
// lets every client in, or only those of Ledger. It can be stopped and
// started again on the same port, as a broker that restarts.
type Broker struct {
	Addr   string       // host:port
	TLS    *tls.Config  // set before Start for a TLS listener (mqtts://)
	Ledger *auth.Ledger // set before Start to admit only its clients

	t   testing.TB
	mu  sync.Mutex
	srv *mqtt.Server
}

// NewBroker returns a Broker on a free port, not started yet; it is
// stopped when the test ends.
func NewBroker(t testing.TB) *Broker {
	b := &Broker{t: t, Addr: FreeAddr(t)}
	t.Cleanup(b.Stop)
	return b
}

// StartBroker returns a started Broker on a free port, stopped when the
// test ends.
func StartBroker(t testing.TB) *Broker {
	t.Helper()
	b := NewBroker(t)
	b.Start()
	return b
}

// URL is the broker's tcp:// (or mqtts://) URL.
func (b *Broker) URL() string {
	if b.TLS != nil {
		return "mqtts://" + b.Addr
	}
	return "tcp://" + b.Addr
}

// Start starts the broker, if it is not running.
func (b *Broker) Start() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.srv != nil {
		return
	}
	srv := mqtt.New(&mqtt.Options{InlineClient: false, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	var err error
	if b.Ledger != nil {
		err = srv.AddHook(new(auth.Hook), &auth.Options{Ledger: b.Ledger})
	} else {
		err = srv.AddHook(new(auth.AllowHook), nil)
	}
	if err != nil {
		b.t.Fatal(err)
	}
	// The port was just freed (or used by the previous instance): retry
	// the listen for a while.
	deadline := time.Now().Add(10 * time.Second)
	for {
		l := listeners.NewTCP(listeners.Config{ID: "t1", Address: b.Addr, TLSConfig: b.TLS})
		err := srv.AddListener(l)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("broker listen %s: %v", b.Addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := srv.Serve(); err != nil {
		b.t.Fatal(err)
	}
	b.srv = srv
}

// Stop stops the broker, if it runs: its clients lose their connection.
func (b *Broker) Stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.srv != nil {
		b.srv.Close()
		b.srv = nil
	}
}

// Inflight is the number of messages the broker has sent clientID and
// not had acknowledged yet, and whether it has a session for clientID.
func (b *Broker) Inflight(clientID string) (int, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.srv == nil {
		return 0, false
	}
	cl, ok := b.srv.Clients.Get(clientID)
	if !ok {
		return 0, false
	}
	return cl.State.Inflight.Len(), true
}

// AddHook adds a hook to the running broker: for a fault a test has it
// cause, such as a refused SUBSCRIBE.
func (b *Broker) AddHook(h mqtt.Hook, config any) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.srv == nil {
		return errors.New("broker not started")
	}
	return b.srv.AddHook(h, config)
}

// WaitSubscribed waits until clientID holds a subscription (shared or
// not) that matches topic; the test fails if it does not within
// UntilLimit.
func (b *Broker) WaitSubscribed(t testing.TB, topic, clientID string) {
	t.Helper()
	Until(t, clientID+" to subscribe to "+topic, func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.srv == nil {
			return false
		}
		subs := b.srv.Topics.Subscribers(topic)
		if _, ok := subs.Subscriptions[clientID]; ok {
			return true
		}
		for _, group := range subs.Shared {
			if _, ok := group[clientID]; ok {
				return true
			}
		}
		return false
	})
}
