package transport

import (
	"testing"
	"time"

	"github.com/edgebench/edgebench/wire"
)

// TestCollectorOnlineTriggersReplay: after a broker restart without
// persistence, the device replays its spool before the collector has
// resubscribed, and that replay is lost. The collector's retained "online"
// message, published once its subscriptions are back, makes the device
// replay again at once: the result is acked without waiting for the
// periodic resend (an hour here).
func TestCollectorOnlineTriggersReplay(t *testing.T) {
	b := newBroker(t, false)
	g := newGate(t, b.addr)
	st := newStore()
	col := dial(t, fastConfig(g.url(), "", "", "collector-"+wire.NewID()), Options{Workers: 2, AnnounceCollector: true})
	sub, err := NewSubscriber(col, SubscriberConfig{Handler: st.handle})
	if err != nil {
		t.Fatal(err)
	}
	dev, sp := device(t, b.url(), t.TempDir(), Options{ResendInterval: time.Hour})
	for _, c := range []*Client{col, dev} {
		if err := c.WaitConnected(ctx10(t)); err != nil {
			t.Fatal(err)
		}
	}
	g.cut() // the collector stays away until the device has replayed
	b.stop()
	waitFor(t, "both clients to notice the broker is gone", func() bool { return !dev.Connected() && !col.Connected() })
	res := smallResult()
	if err := dev.PublishResult(ctx10(t), res); err != nil {
		t.Fatal(err)
	}
	b.start()
	waitFor(t, "the device's replay on the restarted broker", func() bool {
		dev.mu.Lock()
		defer dev.mu.Unlock()
		_, sent := dev.lastSent[res.ID]
		return dev.Connected() && sent
	})
	if s := sub.Stats(); s.Received != 0 {
		t.Fatalf("the collector got the result while away: %+v", s)
	}
	start := time.Now()
	g.open()
	if err := dev.WaitAck(ctx10(t), res.ID); err != nil {
		t.Fatalf("no ack after the collector came back: %v", err)
	}
	t.Logf("acked %v after the collector's path opened", time.Since(start).Round(time.Millisecond))
	waitFor(t, "the ack counted", func() bool { return sub.Stats().Acked == 1 })
	if sp.Has(res.ID) {
		t.Error("the result is still spooled after its ack")
	}
}
