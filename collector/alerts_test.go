package collector

import (
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/edgebench/edgebench/collector/alerts"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/scheduledb"
	"github.com/edgebench/edgebench/collector/store/seriesdb"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/wire"
)

// receiver is a real local HTTP server that takes alerts; it answers 500
// to the first fail requests.
type receiver struct {
	mu     sync.Mutex
	alerts []alerts.Alert
	tries  atomic.Int64
	fail   int64
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	n := r.tries.Add(1)
	if n <= r.fail {
		http.Error(w, "not now", http.StatusInternalServerError)
		return
	}
	var a alerts.Alert
	b, _ := io.ReadAll(req.Body)
	if req.Header.Get("Content-Type") != "application/json" || json.Unmarshal(b, &a) != nil {
		http.Error(w, "bad", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.alerts = append(r.alerts, a)
	r.mu.Unlock()
}

func (r *receiver) kinds() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := map[string]int{}
	for _, a := range r.alerts {
		k[a.Kind]++
	}
	return k
}

// TestAlerts: a change in pi-1's req/s and pi-2 gone quiet reach the
// webhook (through two refusals, retried) and MQTT under
// <prefix>/lab/_alerts/, where the quiet one is retained; the collector's
// account reads them, a device's account does not.
func TestAlerts(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) { testAlerts(t, e) })
}

func testAlerts(t *testing.T, e storetest.Engine) {
	ctx := context.Background()
	rcv := &receiver{fail: 2}
	hook := httptest.NewServer(rcv)
	defer hook.Close()
	listen := testenv.FreeAddr(t)
	broker := "tcp://" + listen
	col := startCollector(t, Config{DB: e.DB(t), Listen: listen, Accounts: testAccounts(),
		Alerts: alerts.Config{Webhook: hook.URL + "/alerts", Interval: 200 * time.Millisecond, Quiet: 2 * time.Second, Backoff: 50 * time.Millisecond}})
	defer col.Close()

	var mu sync.Mutex
	got := map[string][][]byte{}
	sub, err := testenv.MQTTClient(broker, "ops", "collector", "collector-secret")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Disconnect(0)
	sub.Subscribe(prefix+"/lab/_alerts/#", 1, func(_ paho.Client, m paho.Message) {
		mu.Lock()
		got[m.Topic()] = append(got[m.Topic()], m.Payload())
		mu.Unlock()
	}).Wait()
	var devGot atomic.Int64
	spy, err := testenv.MQTTClient(broker, "edgebench-lab-pi-1", "pi-1", "one")
	if err != nil {
		t.Fatal(err)
	}
	defer spy.Disconnect(0)
	for _, f := range []string{prefix + "/lab/_alerts/#", prefix + "/lab/#", "#"} {
		spy.Subscribe(f, 1, func(_ paho.Client, m paho.Message) {
			if strings.Contains(m.Topic(), "_alerts") {
				devGot.Add(1)
			}
		}).WaitTimeout(5 * time.Second)
	}

	// pi-2 says hello and goes away.
	d2 := device(t, broker, "lab", "pi-2", "two")
	testenv.Until(t, "pi-2 known", func() bool {
		ds, _ := col.Store().Devices(ctx)
		return len(ds) == 1
	})
	d2.Close()
	// pi-1's req/s fell by 15 % 16 results ago: the change is final (its
	// window full).
	rng := rand.New(rand.NewPCG(9, 9))
	at := time.Now().Add(-28 * time.Hour)
	var batch []store.Incoming
	for i := range 28 {
		rps := 1000 * (1 + 0.02*rng.NormFloat64())
		if i >= 12 {
			rps *= 0.85
		}
		batch = append(batch, storetest.Incoming(t, storetest.FakeResult(rng, "lab", "pi-1", map[string]string{"server": "nginx"}, at, rps, 800)))
		at = at.Add(time.Hour)
	}
	if _, err := col.Store().Ingest(ctx, batch); err != nil {
		t.Fatal(err)
	}

	testenv.Until(t, "the change and the quiet device at the webhook", func() bool {
		k := rcv.kinds()
		return k[alerts.KindChange] >= 1 && k[alerts.KindQuiet] == 1
	})
	testenv.Until(t, "the same on MQTT", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return got[prefix+"/lab/_alerts/change/pi-1"] != nil && got[prefix+"/lab/_alerts/quiet/pi-2"] != nil
	})
	// The changes page draws pi-1's req/s with the change marked red; the
	// API lists both changes.
	page := scrape(t, "http://"+col.WebAddr()+"/changes")
	if !strings.Contains(page, "lab/pi-1 · GET") || strings.Count(page, `stroke="#b3261e"`) != 2 || !strings.Contains(page, "<polyline") {
		t.Errorf("the changes page:\n%s", page)
	}
	var api []seriesdb.Change
	if err := json.Unmarshal([]byte(scrape(t, "http://"+col.WebAddr()+"/api/changes?days=2")), &api); err != nil || len(api) != 2 {
		t.Errorf("/api/changes: %d changes, %v", len(api), err)
	}
	if n := rcv.tries.Load(); n < 4 {
		t.Errorf("%d webhook requests, want the two refused ones again and more", n)
	}
	mu.Lock()
	rps := 0
	for _, b := range got[prefix+"/lab/_alerts/change/pi-1"] {
		var a alerts.Alert
		json.Unmarshal(b, &a)
		if a.Change != nil && a.Change.Metric == "rps" && a.Change.Worse() && strings.Contains(a.Summary, "worse") {
			rps++
		}
	}
	mu.Unlock()
	if rps != 1 {
		t.Errorf("%d alerts of pi-1's req/s worse on MQTT, want 1", rps)
	}
	time.Sleep(time.Second)                                                      // more checks: each alert once
	if k := rcv.kinds(); k[alerts.KindQuiet] != 1 || k[alerts.KindChange] != 2 { // req/s and CPU per request
		t.Errorf("webhook got %v, want each alert once: 2 changes, 1 quiet", k)
	}
	// A subscriber that comes later gets the retained quiet alert only.
	late, err := testenv.MQTTClient(broker, "ops-2", "collector", "collector-secret")
	if err != nil {
		t.Fatal(err)
	}
	defer late.Disconnect(0)
	var lateTopics sync.Map
	late.Subscribe(prefix+"/lab/_alerts/#", 1, func(_ paho.Client, m paho.Message) { lateTopics.Store(m.Topic(), m.Retained()) }).Wait()
	testenv.Until(t, "the retained quiet alert", func() bool { _, ok := lateTopics.Load(prefix + "/lab/_alerts/quiet/pi-2"); return ok })
	if _, ok := lateTopics.Load(prefix + "/lab/_alerts/change/pi-1"); ok {
		t.Error("a change alert was retained")
	}
	if n := devGot.Load(); n != 0 {
		t.Errorf("a device's account read %d alerts", n)
	}
	if st := col.AlertStats(); st.Posted != 3 || st.Dropped != 0 || st.Published < 3 {
		t.Errorf("alert stats %+v", st)
	}

	// A schedule for pi-2, offline: its firing missed it. pi-1's spool
	// grows past 10 (a raw client: the transport reports its own spool).
	m := storetest.Schedule("for-pi-2")
	m.Trigger.Device = "pi-2"
	if err := col.Store().AddSchedule(ctx, m, time.Now()); err != nil {
		t.Fatal(err)
	}
	raw, err := testenv.MQTTClient(broker, "edgebench-lab-pi-1", "pi-1", "one")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Disconnect(0)
	spooled := 10
	testenv.Until(t, "the missed firing and the growing spool, on MQTT and at the webhook", func() bool {
		spooled++
		hb, _ := (&wire.Heartbeat{V: wire.SchemaVersion, At: time.Now().UTC(), UptimeS: 5, Spooled: spooled}).MarshalMsg(nil)
		raw.Publish(prefix+"/lab/pi-1/heartbeat", 0, false, hb).Wait()
		mu.Lock()
		onMQTT := got[prefix+"/lab/_alerts/missed/for-pi-2"] != nil && got[prefix+"/lab/_alerts/spool/pi-1"] != nil
		mu.Unlock()
		k := rcv.kinds()
		return onMQTT && k[alerts.KindMissed] >= 1 && k[alerts.KindSpool] == 1
	})
	col.Store().PauseSchedule(ctx, "for-pi-2", true, time.Now())
	mu.Lock()
	var a alerts.Alert
	json.Unmarshal(got[prefix+"/lab/_alerts/missed/for-pi-2"][0], &a)
	mu.Unlock()
	if a.Run == nil || len(a.Run.Missed) != 1 || a.Run.Missed[0] != (scheduledb.Missed{Device: "lab/pi-2", Reason: "offline"}) {
		t.Errorf("missed alert %+v", a)
	}
	if n := devGot.Load(); n != 0 {
		t.Errorf("a device's account read %d alerts", n)
	}
}

// TestWebhookNeverBlocksIngest: with a webhook that never answers, a
// hundred alerts are raised at once without waiting, the queue drops what
// it cannot hold, and a device's result is stored and acked meanwhile.
func TestWebhookNeverBlocksIngest(t *testing.T) {
	stuck := make(chan struct{})
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stuck:
		case <-r.Context().Done():
		}
	}))
	defer hook.Close()
	defer close(stuck)
	listen := testenv.FreeAddr(t)
	col := startCollector(t, Config{DB: filepath.Join(t.TempDir(), "e.db"), Listen: listen, Accounts: testAccounts(),
		Alerts: alerts.Config{Webhook: hook.URL, QueueLen: 4}})
	defer col.Close()
	start := time.Now()
	for range 100 {
		col.alerts.Raise(&alerts.Alert{Kind: alerts.KindMissed, Fleet: "lab", Subject: "nightly", At: time.Now(), Summary: "test"})
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("raising 100 alerts took %v", d)
	}
	if st := col.AlertStats(); st.Dropped < 90 {
		t.Errorf("stats %+v: want the queue's overflow dropped", st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d := device(t, "tcp://"+listen, "lab", "pi-1", "one")
	defer d.Close()
	r := storetest.FakeResult(rand.New(rand.NewPCG(1, 1)), "lab", "pi-1", nil, time.Now(), 1000, 800)
	if err := d.PublishResult(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := d.WaitAck(ctx, r.ID); err != nil {
		t.Fatalf("the result was not acked while the webhook hangs: %v", err)
	}
}
