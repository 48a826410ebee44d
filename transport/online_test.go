package transport

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/wire"
)

// TestCollectorOnlineTriggersReplay: after a broker restart without
// persistence, the device replays its spool before the collector has
// resubscribed, and that replay is lost. The collector's retained "online"
// message, published once its subscriptions are back, makes the device
// replay again at once: the result is acked without waiting for the
// periodic resend (an hour here).
func TestCollectorOnlineTriggersReplay(t *testing.T) {
	b := testenv.StartBroker(t)
	g := newGate(t, b.Addr)
	st := newStore()
	col := dial(t, fastConfig(g.url(), "", "", "collector-"+wire.NewID()), Options{Workers: 2, AnnounceCollector: true})
	sub, err := NewSubscriber(col, SubscriberConfig{Handler: st.handle})
	if err != nil {
		t.Fatal(err)
	}
	dev, sp := device(t, b.URL(), t.TempDir(), Options{ResendInterval: time.Hour})
	for _, c := range []*Client{col, dev} {
		if err := c.WaitConnected(ctx10(t)); err != nil {
			t.Fatal(err)
		}
	}
	g.cut() // the collector stays away until the device has replayed
	b.Stop()
	testenv.Until(t, "both clients to notice the broker is gone", func() bool { return !dev.Connected() && !col.Connected() })
	res := smallResult()
	if err := dev.PublishResult(ctx10(t), res); err != nil {
		t.Fatal(err)
	}
	b.Start()
	testenv.Until(t, "the device's replay on the restarted broker", func() bool {
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
	testenv.Until(t, "the ack counted", func() bool { return sub.Stats().Acked == 1 })
	if sp.Has(res.ID) {
		t.Error("the result is still spooled after its ack")
	}
}

// TestCollectorLeavingTriggersReplay: of two collectors sharing the
// results, the one that took a result dies before acknowledging it (its
// connection cut: the broker sends its Last Will). The other announces
// itself again at once, and the device resends the result to it without
// waiting for the periodic resend (an hour here).
func TestCollectorLeavingTriggersReplay(t *testing.T) {
	b := testenv.StartBroker(t)
	g := newGate(t, b.Addr)
	stuck := make(chan struct{})
	t.Cleanup(func() { close(stuck) })
	taken := make(chan string, 1)
	cfgA := fastConfig(g.url(), "", "", "collector-a")
	cfgA.CleanSession = true
	a := dial(t, cfgA, Options{Workers: 2, AnnounceCollector: true})
	if _, err := NewSubscriber(a, SubscriberConfig{Group: "ingest", Handler: func(ctx context.Context, _ wire.Addr, r *wire.Result, _ []byte) error {
		taken <- r.ID
		select { // holds the result, never acks it
		case <-stuck:
		case <-ctx.Done():
		}
		return errors.New("gone")
	}}); err != nil {
		t.Fatal(err)
	}
	cfgB := fastConfig(b.URL(), "", "", "collector-b")
	cfgB.CleanSession = true
	bc := dial(t, cfgB, Options{Workers: 2, AnnounceCollector: true})
	dev, _ := device(t, b.URL(), t.TempDir(), Options{ResendInterval: time.Hour})
	topic, err := dev.topics.Topic(dev.cfg.Fleet, dev.cfg.Device, wire.TopicResult)
	if err != nil {
		t.Fatal(err)
	}
	b.WaitSubscribed(t, topic, cfgA.ClientID) // the result goes to a, the only one in the group yet
	for _, c := range []*Client{a, bc, dev} {
		if err := c.WaitConnected(ctx10(t)); err != nil {
			t.Fatal(err)
		}
	}
	res := smallResult()
	if err := dev.PublishResult(ctx10(t), res); err != nil {
		t.Fatal(err)
	}
	select {
	case <-taken:
	case <-time.After(10 * time.Second):
		t.Fatal("collector a did not take the result")
	}
	st := newStore()
	subB, err := NewSubscriber(bc, SubscriberConfig{Group: "ingest", Handler: st.handle})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	g.cut() // as a kill -9: the broker sends a's Last Will
	if err := dev.WaitAck(ctx10(t), res.ID); err != nil {
		got := subB.Stats()
		t.Fatalf("the result was not acknowledged after the first collector left: %v (the other collector received %d, acked %d)", err, got.Received, got.Acked)
	}
	t.Logf("acked by the other collector %v after the first one left", time.Since(start).Round(time.Millisecond))
	if n, _ := st.count(); n != 1 {
		t.Errorf("the other collector stored %d results", n)
	}
}
