package transport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/spool"
	"github.com/edgebench/edgebench/wire"
	"github.com/edgebench/edgebench/wire/wiretest"
)

func TestPublishResultAcked(t *testing.T) {
	b := testenv.StartBroker(t)
	st := newStore()
	_, sub := collector(t, b.URL(), st, "")
	dev, sp := device(t, b.URL(), t.TempDir(), Options{})
	if err := dev.WaitConnected(ctx10(t)); err != nil {
		t.Fatal(err)
	}
	res := wiretest.Result(t)
	res.Fleet, res.Device = "", "" // filled in by the client
	if err := dev.PublishResult(ctx10(t), res); err != nil {
		t.Fatal(err)
	}
	if err := dev.WaitAck(ctx10(t), res.ID); err != nil {
		t.Fatal(err)
	}
	if n := sp.Stats().Count; n != 0 {
		t.Errorf("%d results left in the spool after the ack", n)
	}
	stored, deliveries := st.count()
	if stored != 1 || deliveries[res.ID] != 1 {
		t.Errorf("stored %d, deliveries %v: want the result once", stored, deliveries)
	}
	st.mu.Lock()
	got := st.results[res.ID]
	st.mu.Unlock()
	if got.Device != "pi4-07" || got.Fleet != "lab" || len(got.Runs[0].System.Samples) != 30 {
		t.Errorf("stored result: %s/%s, %d samples", got.Fleet, got.Device, len(got.Runs[0].System.Samples))
	}
	// The device may have the ack before the collector has the broker's
	// PUBACK for it, and counts it.
	testenv.Until(t, "the ack counted", func() bool { return sub.Stats().Acked == 1 })
	if s := sub.Stats(); s.Malformed != 0 {
		t.Errorf("subscriber stats %+v", s)
	}
}

// TestBrokerDownThenUp: the broker is down for the whole run; the result
// waits in the spool and arrives once when the broker comes up.
func TestBrokerDownThenUp(t *testing.T) {
	b := testenv.NewBroker(t)
	st := newStore()
	dir := t.TempDir()
	// The device reaches the broker through a gate, shut until the
	// collector is in: had the device got in between the collector's
	// subscription and its announcement, it would send the result on its
	// connect and again on the announcement (at least once, as designed),
	// and this test wants to see it sent once.
	g := newGate(t, b.Addr)
	g.cut()
	dev, sp := device(t, g.url(), dir, Options{})
	res := smallResult()
	if err := dev.PublishResult(ctx10(t), res); err != nil {
		t.Fatalf("publish with the broker down: %v", err)
	}
	if !sp.Has(res.ID) {
		t.Fatal("result not spooled")
	}
	// The collector first, so that it is subscribed when the device gets in.
	b.Start()
	col, _ := collector(t, b.URL(), st, "")
	testenv.Until(t, "the collector subscribed and announced", col.restored.Load)
	g.open()
	if err := dev.WaitAck(ctx10(t), res.ID); err != nil {
		t.Fatal(err)
	}
	stored, deliveries := st.count()
	if stored != 1 || deliveries[res.ID] != 1 {
		t.Errorf("stored %d, deliveries %v: want the result once", stored, deliveries)
	}
	if n := sp.Stats().Count; n != 0 {
		t.Errorf("spool holds %d after the ack", n)
	}
}

// TestBrokerRestartBeforeAck: the broker goes away after the collector got
// the result and before its ack got out; after the restart the device
// sends it again, the collector stores it (idempotently) and acks, and the
// spool empties.
func TestBrokerRestartBeforeAck(t *testing.T) {
	b := testenv.StartBroker(t)
	st := newStore()
	var once sync.Once
	got := make(chan struct{})
	release := make(chan struct{})
	st.fail = func(*wire.Result) error {
		once.Do(func() {
			close(got)
			<-release // hold the first delivery until the broker is gone
		})
		return nil
	}
	col, sub := collector(t, b.URL(), st, "")
	// The device may replay before the collector has resubscribed after
	// the restart; the periodic resend covers that.
	dev, sp := device(t, b.URL(), t.TempDir(), Options{ResendInterval: 300 * time.Millisecond})
	if err := dev.WaitConnected(ctx10(t)); err != nil {
		t.Fatal(err)
	}
	res := smallResult()
	if err := dev.PublishResult(ctx10(t), res); err != nil {
		t.Fatal(err)
	}
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("collector did not get the result in 10 s")
	}
	b.Stop()
	testenv.Until(t, "both clients to notice the broker is gone", func() bool { return !dev.Connected() && !col.Connected() })
	close(release)
	testenv.Until(t, "the collector to give up on the ack", func() bool { s := sub.Stats(); return s.Received == 1 && s.Acked == 0 })
	if !sp.Has(res.ID) {
		t.Fatal("result left the spool without an ack")
	}
	b.Start()
	if err := dev.WaitAck(ctx10(t), res.ID); err != nil {
		t.Fatal(err)
	}
	stored, deliveries := st.count()
	if stored != 1 || deliveries[res.ID] < 2 {
		t.Errorf("stored %d, deliveries %v: want one result delivered twice", stored, deliveries)
	}
	if n := sp.Stats().Count; n != 0 {
		t.Errorf("spool holds %d after the ack", n)
	}
}

// TestTornSpoolSendsTheRest: a spool with a file cut short by a kill; the
// next start sets it aside and sends the others.
func TestTornSpoolSendsTheRest(t *testing.T) {
	dir := t.TempDir()
	sp, err := spool.Open(dir, spool.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for range 3 {
		r := smallResult()
		r.Fleet, r.Device = "lab", "pi4-07"
		if err := sp.Put(r.ID, wiretest.Marshal(t, r)); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	torn := filepath.Join(dir, ids[1]+".msg")
	raw, _ := os.ReadFile(torn)
	os.WriteFile(torn, raw[:len(raw)-5], 0o640)

	b := testenv.StartBroker(t)
	st := newStore()
	collector(t, b.URL(), st, "")
	dev, sp2 := device(t, b.URL(), dir, Options{})
	if sp2.Stats().Torn != 1 {
		t.Errorf("torn %d, want 1", sp2.Stats().Torn)
	}
	for _, id := range []string{ids[0], ids[2]} {
		if err := dev.WaitAck(ctx10(t), id); err != nil {
			t.Fatal(err)
		}
	}
	stored, deliveries := st.count()
	if stored != 2 || deliveries[ids[1]] != 0 {
		t.Errorf("stored %d, deliveries %v: want the two whole results only", stored, deliveries)
	}
	if _, err := os.Stat(filepath.Join(dir, "torn", ids[1]+".msg")); err != nil {
		t.Errorf("torn file not set aside: %v", err)
	}
}

// TestHandlerErrorNotAcked: a result the collector failed to store is not
// acked; the device sends it again and it is stored then.
func TestHandlerErrorNotAcked(t *testing.T) {
	b := testenv.StartBroker(t)
	st := newStore()
	var mu sync.Mutex
	fails := 1
	st.fail = func(*wire.Result) error {
		mu.Lock()
		defer mu.Unlock()
		if fails > 0 {
			fails--
			return errors.New("database is locked")
		}
		return nil
	}
	_, sub := collector(t, b.URL(), st, "")
	dev, _ := device(t, b.URL(), t.TempDir(), Options{ResendInterval: 200 * time.Millisecond})
	if err := dev.WaitConnected(ctx10(t)); err != nil {
		t.Fatal(err)
	}
	res := smallResult()
	if err := dev.PublishResult(ctx10(t), res); err != nil {
		t.Fatal(err)
	}
	if err := dev.WaitAck(ctx10(t), res.ID); err != nil {
		t.Fatal(err)
	}
	if s := sub.Stats(); s.Failed != 1 || s.Acked != 1 {
		t.Errorf("subscriber stats %+v, want 1 failed and 1 acked", s)
	}
}

// TestMalformedDropped: garbage on a result topic is counted and dropped,
// and the next good result is stored.
func TestMalformedDropped(t *testing.T) {
	b := testenv.StartBroker(t)
	st := newStore()
	_, sub := collector(t, b.URL(), st, "")
	dev, _ := device(t, b.URL(), t.TempDir(), Options{})
	if err := dev.WaitConnected(ctx10(t)); err != nil {
		t.Fatal(err)
	}
	topic, _ := dev.Topics().Topic("lab", "pi4-07", wire.TopicResult)
	for _, junk := range [][]byte{{0xc1}, {0x81, 0xa2, 'r', 's', 0xdd, 0xff, 0xff, 0xff}, wiretest.Marshal(t, wiretest.Ack())} {
		if err := dev.Publish(ctx10(t), topic, 1, false, junk); err != nil {
			t.Fatal(err)
		}
	}
	// A result claiming another device's name.
	other := smallResult()
	other.Fleet, other.Device = "lab", "someone-else"
	dev.Publish(ctx10(t), topic, 1, false, wiretest.Marshal(t, other))

	res := smallResult()
	if err := dev.PublishResult(ctx10(t), res); err != nil {
		t.Fatal(err)
	}
	if err := dev.WaitAck(ctx10(t), res.ID); err != nil {
		t.Fatal(err)
	}
	testenv.Until(t, "the ack counted", func() bool { return sub.Stats().Acked == 1 })
	// The ack-shaped junk and the other device's result have an id: they
	// are acked as rejected.
	if s := sub.Stats(); s.Malformed != 4 || s.Rejected != 2 {
		t.Errorf("subscriber stats %+v, want 4 malformed, 2 of them rejected", s)
	}
}

// TestBirthAndWill: the retained birth and the Last Will of a connection
// carry the same conn_seq; after a reconnect the new birth has a larger
// one; Close publishes offline.
func TestBirthAndWill(t *testing.T) {
	b := testenv.StartBroker(t)
	statuses := make(chan *wire.Status, 16)
	watch := dial(t, fastConfig(b.URL(), "", "", "watcher"), Options{})
	filter, _ := watch.Topics().Filter("lab", "+", wire.TopicStatus, "")
	if err := watch.Subscribe(filter, 1, func(_ context.Context, _ string, p []byte) {
		s, err := wire.DecodeStatus(p)
		if err != nil {
			t.Errorf("status: %v", err)
			return
		}
		statuses <- s
	}); err != nil {
		t.Fatal(err)
	}
	if err := watch.WaitConnected(ctx10(t)); err != nil {
		t.Fatal(err)
	}
	next := func(want wire.StatusState) *wire.Status {
		t.Helper()
		for {
			select {
			case s := <-statuses:
				if s.State == want {
					return s
				}
				t.Logf("status %s conn_seq %d (waiting for %s)", s.State, s.ConnSeq, want)
			case <-time.After(10 * time.Second):
				t.Fatalf("no %s status in 10 s", want)
			}
		}
	}
	info := &wire.DeviceInfo{Hostname: "pi4-07", Cores: 4}
	// The device reaches the broker through a gate, which drops its link
	// and holds reconnects back until the will has been seen: a new
	// connection that takes the session over before the broker has ended
	// the old one changes when (and whether) mochi sends that will.
	g := newGate(t, b.Addr)
	dev, err := Dial(fastConfig(g.url(), "lab", "pi4-07", ""), Options{Log: testLog(t), Birth: &wire.Status{BootID: "boot-1", Info: info}})
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	birth := next(wire.StatusOnline)
	if birth.BootID != "boot-1" || birth.Info == nil || birth.Info.Cores != 4 || birth.At.IsZero() {
		t.Errorf("birth %+v", birth)
	}
	if !g.cut() {
		t.Fatal("the device has no connection through the gate")
	}
	will := next(wire.StatusLost)
	if will.ConnSeq != birth.ConnSeq || will.BootID != "boot-1" {
		t.Errorf("will conn_seq %d boot %q, birth conn_seq %d", will.ConnSeq, will.BootID, birth.ConnSeq)
	}
	g.open()
	// A birth not acked before the cut is sent again (QoS 1, at least
	// once) with its own conn_seq; the new connection's birth follows.
	var again *wire.Status
	for again == nil {
		s := next(wire.StatusOnline)
		switch {
		case s.ConnSeq > birth.ConnSeq:
			again = s
		case s.ConnSeq == birth.ConnSeq:
			t.Logf("the first birth again (conn_seq %d)", s.ConnSeq)
		default:
			t.Fatalf("birth conn_seq %d after conn_seq %d", s.ConnSeq, birth.ConnSeq)
		}
	}
	dev.Close()
	off := next(wire.StatusOffline)
	if off.ConnSeq != again.ConnSeq {
		t.Errorf("offline conn_seq %d, birth %d", off.ConnSeq, again.ConnSeq)
	}
	// The status is retained: a newcomer sees offline.
	late := dial(t, fastConfig(b.URL(), "", "", "late"), Options{})
	seen := make(chan *wire.Status, 4)
	late.Subscribe(filter, 1, func(_ context.Context, _ string, p []byte) {
		if s, err := wire.DecodeStatus(p); err == nil {
			seen <- s
		}
	})
	select {
	case s := <-seen:
		if s.State != wire.StatusOffline || s.ConnSeq != again.ConnSeq {
			t.Errorf("retained status %s conn_seq %d, want offline %d", s.State, s.ConnSeq, again.ConnSeq)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no retained status in 10 s")
	}
}

// TestCommandsAndEvents: the collector sends commands to one device and to
// the fleet; the device gets both (subscriptions survive a broker restart)
// and answers with events.
func TestCommandsAndEvents(t *testing.T) {
	b := testenv.StartBroker(t)
	col := dial(t, fastConfig(b.URL(), "", "", "collector"), Options{})
	events := make(chan *wire.Event, 8)
	filter, _ := col.Topics().Filter("lab", "+", wire.TopicEvent, "")
	col.Subscribe(filter, 1, func(_ context.Context, _ string, p []byte) {
		if e, err := wire.DecodeEvent(p); err == nil {
			events <- e
		}
	})
	dev := dial(t, fastConfig(b.URL(), "lab", "pi4-07", ""), Options{})
	cmds := make(chan *wire.Command, 8)
	if err := dev.SubscribeCommands(func(_ context.Context, c *wire.Command) { cmds <- c }); err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		if err := dev.WaitConnected(ctx10(t)); err != nil {
			t.Fatal(err)
		}
		if err := col.WaitConnected(ctx10(t)); err != nil {
			t.Fatal(err)
		}
		// Subscriptions are restored asynchronously after a connect, one
		// after the other: resend until the device hears.
		c1 := wiretest.Command()
		c1.ID = wire.NewID()
		c2 := wiretest.Command()
		c2.ID, c2.Kind, c2.Spec = wire.NewID(), wire.KindInfo, wire.CommandSpec{}
		for _, c := range []struct {
			cmd    *wire.Command
			device string
		}{{c1, "pi4-07"}, {c2, wire.AllDevices}} {
			deadline := time.After(10 * time.Second)
		send:
			for {
				col.PublishCommand(ctx10(t), "lab", c.device, c.cmd)
				select {
				case got := <-cmds:
					if got.ID == c.cmd.ID {
						break send
					}
				case <-time.After(200 * time.Millisecond):
				case <-deadline:
					t.Fatalf("round %d: no command to %s in 10 s", round, c.device)
				}
			}
		}
		ev := &wire.Event{V: wire.SchemaVersion, CommandID: c1.ID, Seq: 1, State: wire.StateAccepted, At: time.Now().UTC()}
		if err := dev.PublishEvent(ctx10(t), ev); err != nil {
			t.Fatal(err)
		}
		select {
		case e := <-events:
			if e.CommandID != c1.ID || e.State != wire.StateAccepted {
				t.Errorf("event %+v", e)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no event in 10 s")
		}
		if round == 0 {
			b.Stop()
			testenv.Until(t, "disconnect", func() bool { return !dev.Connected() })
			b.Start()
		}
	}
	if err := dev.PublishHeartbeat(ctx10(t), wiretest.Heartbeat()); err != nil {
		t.Error(err)
	}
}

func TestCloseWhileBrokerDown(t *testing.T) {
	b := testenv.NewBroker(t)
	dev, _ := device(t, b.URL(), t.TempDir(), Options{Birth: &wire.Status{BootID: "x"}})
	if err := dev.PublishResult(ctx10(t), smallResult()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := dev.WaitConnected(ctx); err == nil {
		t.Fatal("connected to a broker that is down")
	}
	dev.Close()
	if err := dev.PublishResult(ctx10(t), smallResult()); err != nil {
		// The spool still works; publishing is skipped.
		t.Logf("publish after close: %v", err)
	}
}

func TestDialConfigErrors(t *testing.T) {
	for _, cfg := range []ClientConfig{
		{Broker: "localhost:1883", Fleet: "f", Device: "d"},
		{Broker: "http://x:1", Fleet: "f", Device: "d"},
		{Broker: "tcp://x:1", Fleet: "F", Device: "d"},
		{Broker: "tcp://x:1", Fleet: "f", Device: "_all"},
		{Broker: "tcp://x:1", Fleet: "f", Device: "d", CAFile: "ca.pem"},
		{Broker: "ssl://x:1", Fleet: "f", Device: "d", CertFile: "c.pem"},
		{Broker: "tcp://x:1"},
		{Broker: "tcp://x:1", Fleet: "f", Device: "d", Prefix: "a/#"},
	} {
		if c, err := Dial(cfg, Options{}); err == nil {
			c.Close()
			t.Errorf("%+v accepted", cfg)
		}
	}
}

// TestTLSClientCert connects over TLS with a CA and a client certificate
// the broker requires.
func TestTLSClientCert(t *testing.T) {
	files := testenv.Certs(t, t.TempDir(), "pi4-07")
	srv, err := tls.LoadX509KeyPair(files.ServerCert, files.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(files.CA)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	b := testenv.NewBroker(t)
	b.TLS = &tls.Config{
		Certificates: []tls.Certificate{srv},
		ClientAuth:   tls.RequireAndVerifyClientCert, ClientCAs: pool, MinVersion: tls.VersionTLS12,
	}
	b.Start()

	cfg := fastConfig(b.URL(), "lab", "pi4-07", "")
	cfg.CAFile = files.CA
	cfg.CertFile, cfg.KeyFile = files.ClientCert, files.ClientKey
	cfg.Username, cfg.Password = "pi4-07", "secret"
	dev := dial(t, cfg, Options{})
	if err := dev.WaitConnected(ctx10(t)); err != nil {
		t.Fatal(err)
	}
	if err := dev.PublishEvent(ctx10(t), wiretest.Event()); err != nil {
		t.Fatal(err)
	}

	// Without the client certificate the broker refuses.
	cfg.CertFile, cfg.KeyFile, cfg.ClientID = "", "", "no-cert"
	bad := dial(t, cfg, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := bad.WaitConnected(ctx); err == nil {
		t.Error("connected without a client certificate")
	}
}

// TestMosquitto runs delivery against Debian's mosquitto, with two
// collectors sharing the ingest through a $share group: each result is
// stored by exactly one of them.
func TestMosquitto(t *testing.T) {
	url := testenv.Mosquitto(t)
	a, bb := newStore(), newStore()
	collector(t, url, a, "ingest")
	collector(t, url, bb, "ingest")
	dev, sp := device(t, url, t.TempDir(), Options{Birth: &wire.Status{BootID: "m"}})
	if err := dev.WaitConnected(ctx10(t)); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for range 6 {
		r := smallResult()
		if err := dev.PublishResult(ctx10(t), r); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	for _, id := range ids {
		if err := dev.WaitAck(ctx10(t), id); err != nil {
			t.Fatal(err)
		}
	}
	na, _ := a.count()
	nb, _ := bb.count()
	if na+nb != len(ids) {
		t.Errorf("stored %d + %d, want %d in all", na, nb, len(ids))
	}
	t.Logf("shared ingest: %d and %d results", na, nb)
	if sp.Stats().Count != 0 {
		t.Errorf("spool holds %d", sp.Stats().Count)
	}
}

// TestEventsKeptWhileOffline: events published while the device's link to
// the broker is down are kept and arrive, in order, once it is back.
func TestEventsKeptWhileOffline(t *testing.T) {
	b := testenv.StartBroker(t)
	col := dial(t, fastConfig(b.URL(), "", "", "collector"), Options{})
	events := make(chan *wire.Event, 16)
	filter, _ := col.Topics().Filter("lab", "+", wire.TopicEvent, "")
	col.Subscribe(filter, 1, func(_ context.Context, _ string, p []byte) {
		if e, err := wire.DecodeEvent(p); err == nil {
			events <- e
		}
	})
	if err := col.WaitConnected(ctx10(t)); err != nil {
		t.Fatal(err)
	}
	g := newGate(t, b.Addr)
	dev := dial(t, fastConfig(g.url(), "lab", "pi4-07", ""), Options{})
	if err := dev.WaitConnected(ctx10(t)); err != nil {
		t.Fatal(err)
	}
	g.cut()
	testenv.Until(t, "disconnect", func() bool { return !dev.Connected() })
	id := wire.NewID()
	states := []wire.EventState{wire.StateAccepted, wire.StateRunning, wire.StateRunning, wire.StateSucceeded}
	for i, st := range states {
		ev := &wire.Event{V: wire.SchemaVersion, CommandID: id, Seq: uint32(i + 1), State: st, At: time.Now().UTC()}
		if err := dev.PublishEvent(ctx10(t), ev); err != nil {
			t.Fatalf("event %d while offline: %v", i+1, err)
		}
	}
	if n, _ := dev.EventsKept(); n != len(states) {
		t.Errorf("%d events kept, want %d", n, len(states))
	}
	g.open()
	// Each arrives at least once (a receiver's handlers are not ordered:
	// the collector orders events by seq).
	seen := map[uint32]bool{}
	for len(seen) < len(states) {
		select {
		case e := <-events:
			if e.CommandID == id {
				seen[e.Seq] = true
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("events after the link came back: seq %v, want 1..%d", seen, len(states))
		}
	}
	for i := range states {
		if !seen[uint32(i+1)] {
			t.Errorf("event seq %d missing (seen %v)", i+1, seen)
		}
	}
	testenv.Until(t, "an empty outbox", func() bool { n, _ := dev.EventsKept(); return n == 0 })
}

// TestFullQueueHoldsQoS1Back: with a queue of one and a stalled handler,
// QoS 1 messages wait (their PUBACKs with them) instead of being dropped;
// all arrive once the handler moves again.
func TestFullQueueHoldsQoS1Back(t *testing.T) {
	b := testenv.StartBroker(t)
	release := make(chan struct{})
	got := make(chan string, 64)
	sub := dial(t, fastConfig(b.URL(), "", "", "slow"), Options{Workers: 1, QueueLen: 1})
	if err := sub.Subscribe("t/#", 1, func(_ context.Context, topic string, _ []byte) {
		<-release
		got <- topic
	}); err != nil {
		t.Fatal(err)
	}
	if err := sub.WaitConnected(ctx10(t)); err != nil {
		t.Fatal(err)
	}
	pub := dial(t, fastConfig(b.URL(), "", "", "fast"), Options{})
	if err := pub.WaitConnected(ctx10(t)); err != nil {
		t.Fatal(err)
	}
	// Subscriptions are restored asynchronously: wait until one message
	// gets through (and stalls in the handler).
	const n = 40
	testenv.Until(t, "the subscription", func() bool {
		pub.Publish(ctx10(t), "t/probe", 0, false, []byte("x"))
		return len(sub.queue) > 0 || sub.Dropped() > 0
	})
	for i := range n {
		// Publish does not wait for the subscriber: the broker acks.
		if err := pub.Publish(ctx10(t), "t/"+strconv.Itoa(i), 1, false, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	close(release)
	seen := map[string]bool{}
	for len(seen) < n {
		select {
		case topic := <-got:
			if topic != "t/probe" {
				seen[topic] = true
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of %d QoS 1 messages handled, %d dropped", len(seen), n, sub.Dropped())
		}
	}
	if d := sub.Dropped(); d > 0 {
		// Only probes (QoS 0) may have been dropped.
		t.Logf("%d QoS 0 probes dropped", d)
	}
}
