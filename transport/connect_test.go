package transport

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/hooks/auth"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/edgebench/edgebench/internal/testenv"
)

// authBroker is a mochi broker that admits user dev with password pw only.
func authBroker(t *testing.T) string {
	t.Helper()
	b := testenv.NewBroker(t)
	b.Ledger = &auth.Ledger{Auth: auth.AuthRules{{Username: "dev", Password: "pw", Allow: true}}}
	b.Start()
	return b.URL()
}

// TestConnectFailuresSayWhy: a client that cannot connect logs a warning
// with the broker's address and the reason (not reachable, login refused),
// and does not log every attempt of a long run of failures.
func TestConnectFailuresSayWhy(t *testing.T) {
	for _, c := range []struct {
		name, broker, password, want string
	}{
		{"unreachable", "tcp://" + testenv.FreeAddr(t), "pw", "not reachable: dial tcp"},
		{"wrong password", authBroker(t), "wrong", "the broker refused the login: not authorised"},
	} {
		t.Run(c.name, func(t *testing.T) {
			core, logs := observer.New(zap.WarnLevel)
			cfg := fastConfig(c.broker, "lab", "pi4-07", "")
			cfg.Username, cfg.Password, cfg.RetryInterval = "dev", c.password, 20*time.Millisecond
			cl := dial(t, cfg, Options{Log: zap.New(core)})
			warned := func() []observer.LoggedEntry {
				return logs.FilterMessage("cannot connect to the broker; retrying").All()
			}
			testenv.Until(t, "a few failed attempts", func() bool {
				w := warned()
				return len(w) >= 3 && w[len(w)-1].ContextMap()["attempts"].(int64) >= 4
			})
			w := warned()
			f := w[0].ContextMap()
			if f["broker"] != c.broker || !strings.Contains(f["reason"].(string), c.want) {
				t.Errorf("warning %v, want broker %s and a reason with %q", f, c.broker, c.want)
			}
			attempts := w[len(w)-1].ContextMap()["attempts"].(int64)
			if int64(len(w)) >= attempts {
				t.Errorf("%d warnings for %d attempts: every attempt logged", len(w), attempts)
			}
			if err := cl.ConnectError(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("ConnectError %v, want %q", err, c.want)
			}
		})
	}
}

// TestOversizeMessageSkipped: the payload of a message over MaxPacketSize
// is skipped as it arrives: the handler gets the message empty, the
// connection goes on, the next message is delivered, and the skipped one
// is acknowledged, so the broker does not send it again on the next
// connection of the session.
func TestOversizeMessageSkipped(t *testing.T) {
	b := testenv.StartBroker(t)
	g := newGate(t, b.Addr)
	c := dial(t, fastConfig(g.url(), "lab", "pi4-07", ""), Options{})
	got := make(chan int, 8)
	topic := "edgebench/v1/lab/pi4-07/cmd"
	if err := c.Subscribe(topic, 1, func(_ context.Context, _ string, p []byte) { got <- len(p) }); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitConnected(ctx10(t)); err != nil {
		t.Fatal(err)
	}
	pub := dial(t, ClientConfig{Broker: b.URL(), ClientID: "attacker", RetryInterval: 50 * time.Millisecond}, Options{})
	if err := pub.WaitConnected(ctx10(t)); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{8 << 20, MaxPacketSize + 1, 100} {
		if err := pub.Publish(ctx10(t), topic, 1, false, make([]byte, n)); err != nil {
			t.Fatal(err)
		}
	}
	sizes := map[int]int{}
	for i := range 3 {
		select {
		case n := <-got:
			sizes[n]++
		case <-time.After(10 * time.Second):
			t.Fatalf("message %d never came", i+1)
		}
	}
	if sizes[0] != 2 || sizes[100] != 1 {
		t.Errorf("the handler got messages of %v bytes, want two empty and the 100-byte one", sizes)
	}
	if s := c.Skipped(); s != 2 {
		t.Errorf("%d messages skipped, want 2", s)
	}
	// A new connection of the same session: nothing unacknowledged is sent
	// again.
	testenv.Until(t, "the broker to have the acks", func() bool {
		n, ok := b.Inflight(c.Config().ClientID)
		return ok && n == 0
	})
	g.cut()
	testenv.Until(t, "the disconnect", func() bool { return !c.Connected() })
	g.open()
	if err := c.WaitConnected(ctx10(t)); err != nil {
		t.Fatal(err)
	}
	if err := pub.Publish(ctx10(t), topic, 1, false, make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-got:
		if n != 10 {
			t.Errorf("after a reconnect the handler got %d bytes, want only the new 10-byte message", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the message after the reconnect never came")
	}
	if s := c.Skipped(); s != 2 {
		t.Errorf("%d messages skipped after the reconnect, want still 2", s)
	}
}
