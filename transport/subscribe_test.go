package transport

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgebench/edgebench/internal/testenv"
)

// refuseSubscribe makes the broker refuse a filter's SUBSCRIBE (SUBACK
// 0x80) the first n times, as mochi does when the packet id is one it has
// in flight to the client.
type refuseSubscribe struct {
	mqtt.HookBase
	filter string
	left   atomic.Int32
}

func (h *refuseSubscribe) ID() string { return "refuse-subscribe" }

func (h *refuseSubscribe) Provides(b byte) bool { return b == mqtt.OnSubscribe }

// OnSubscribe turns the filter into an invalid one, which the broker
// refuses with 0x80.
func (h *refuseSubscribe) OnSubscribe(_ *mqtt.Client, pk packets.Packet) packets.Packet {
	for i, f := range pk.Filters {
		if f.Filter == h.filter && h.left.Add(-1) >= 0 {
			pk.Filters[i].Filter = f.Filter + "/#/refused"
		}
	}
	return pk
}

// A filter the broker refuses in its SUBACK is subscribed again; paho
// reports the SUBACK as a success, so without the check the client would
// believe it subscribed and never receive a message.
func TestSubscribeRefusedIsRetried(t *testing.T) {
	const filter = "x/refused/once"
	b := testenv.StartBroker(t)
	h := &refuseSubscribe{filter: filter}
	h.left.Store(2)
	if err := b.AddHook(h, nil); err != nil {
		t.Fatal(err)
	}
	c := dial(t, fastConfig(b.URL(), "", "", "sub-retry"), Options{Workers: 1})
	if err := c.WaitConnected(ctx10(t)); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	if err := c.Subscribe(filter, 1, func(_ context.Context, topic string, _ []byte) { got <- topic }); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	if n := h.left.Load(); n >= 0 {
		t.Fatalf("the broker was asked %d times, want 3", 2-n)
	}
	pub := dial(t, fastConfig(b.URL(), "", "", "sub-retry-pub"), Options{})
	if err := pub.WaitConnected(ctx10(t)); err != nil {
		t.Fatal(err)
	}
	if err := pub.Publish(ctx10(t), filter, 1, false, []byte("x")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("no message on the filter the broker refused once")
	}

	// A filter refused every time is an error, not a silent success.
	h2 := &refuseSubscribe{filter: "x/refused/always"}
	h2.left.Store(1 << 30)
	if err := b.AddHook(h2, nil); err != nil {
		t.Fatal(err)
	}
	err := c.Subscribe("x/refused/always", 1, func(context.Context, string, []byte) {})
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("subscribe to an always refused filter = %v, want an error", err)
	}
}
