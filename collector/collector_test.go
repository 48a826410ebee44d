package collector

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"go.uber.org/zap/zaptest"

	"github.com/tinylib/msgp/msgp"

	"github.com/edgebench/edgebench/collector/broker"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/scheduledb"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/spool"
	"github.com/edgebench/edgebench/transport"
	"github.com/edgebench/edgebench/wire"
	"github.com/edgebench/edgebench/wire/wiretest"
)

// sqliteDB opens the SQLite file of a collector's store for the test's
// own SQL, beside the collector's connections; it is closed when the test
// ends.
func sqliteDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestMain(m *testing.M) { testenv.Main(m) }

const prefix = wire.DefaultPrefix

func testAccounts() *broker.Accounts {
	return &broker.Accounts{
		Collector: broker.Account{Username: "collector", Password: "collector-secret"},
		Devices: []broker.Account{
			{Fleet: "lab", ID: "pi-1", Password: "one"},
			{Fleet: "lab", ID: "pi-2", Password: "two"},
		},
	}
}

func startCollector(t *testing.T, cfg Config) *Collector {
	t.Helper()
	if cfg.Web == "" {
		cfg.Web = "127.0.0.1:0"
	}
	cfg.Log = zaptest.NewLogger(t)
	c, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.WaitConnected(ctx); err != nil {
		c.Close()
		t.Fatal(err)
	}
	return c
}

// device is a device's transport client with a spool.
func device(t *testing.T, broker, fleet, id, password string) *transport.Client {
	t.Helper()
	sp, err := spool.Open(t.TempDir(), spool.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := transport.Dial(transport.ClientConfig{Broker: broker, Username: id, Password: password, Fleet: fleet, Device: id,
		RetryInterval: 200 * time.Millisecond},
		transport.Options{Spool: sp, Birth: &wire.Status{BootID: "boot-" + id, Info: &wire.DeviceInfo{
			Board: "Raspberry Pi 4 Model B", OS: "Debian 12", Labels: map[string]string{"site": "attic"}}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.WaitConnected(ctx); err != nil {
		c.Close()
		t.Fatal(err)
	}
	return c
}

func TestCollectorEmbeddedBroker(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	db := filepath.Join(t.TempDir(), "edgebench.db")
	listen := testenv.FreeAddr(t)
	broker := "tcp://" + listen
	col := startCollector(t, Config{DB: db, Listen: listen, Accounts: testAccounts()})
	closed := false
	defer func() {
		if !closed {
			col.Close()
		}
	}()

	// A device delivers a result end to end: spool, publish, store, ack.
	d1 := device(t, broker, "lab", "pi-1", "one")
	defer d1.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	res := storetest.FakeResult(rng, "lab", "pi-1", map[string]string{"server": "nginx"}, time.Now(), 1000, 800)
	if err := d1.PublishResult(ctx, res); err != nil {
		t.Fatal(err)
	}
	if err := d1.WaitAck(ctx, res.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := col.Store().Result(ctx, res.ID); err != nil {
		t.Fatalf("acked but not stored: %v", err)
	}
	testenv.Until(t, "pi-1 online", func() bool {
		devs, _ := col.Store().Devices(ctx)
		return len(devs) == 1 && devs[0].Online && devs[0].Info != nil
	})

	// Wrong credentials, a stranger, and another device's client id are refused.
	for _, bad := range []struct{ id, user, pw string }{
		{"edgebench-lab-pi-1", "pi-1", "wrong"},
		{"x", "", ""},
		{"edgebench-lab-pi-3", "pi-3", "three"},
		{"edgebench-lab-pi-1", "pi-2", "two"}, // pi-2 taking over pi-1's session
	} {
		if c, err := testenv.MQTTClient(broker, bad.id, bad.user, bad.pw); err == nil {
			c.Disconnect(0)
			t.Errorf("%+v connected", bad)
		}
	}

	// A watcher with the collector's account sees everything that gets
	// through the broker.
	var mu sync.Mutex
	seen := map[string]int{}
	watcher, err := testenv.MQTTClient(broker, "watcher", "collector", "collector-secret")
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Disconnect(0)
	if tok := watcher.Subscribe(prefix+"/#", 1, func(_ paho.Client, m paho.Message) {
		mu.Lock()
		seen[m.Topic()]++
		mu.Unlock()
	}); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatal("watcher subscribe", tok.Error())
	}
	count := func(topic string) int { mu.Lock(); defer mu.Unlock(); return seen[topic] }

	// pi-2 may not publish pi-1's results, any command, or an ack (the
	// broker drops such a QoS 1 publish and the connection, as MQTT 3.1.1
	// has no negative PUBACK), nor subscribe to pi-1's commands or a
	// wildcard.
	forged := storetest.FakeResult(rng, "lab", "pi-1", nil, time.Now(), 1, 1)
	fb, _ := forged.MarshalMsg(nil)
	denied := []string{prefix + "/lab/pi-1/result", prefix + "/lab/pi-2/cmd", prefix + "/lab/_all/cmd", prefix + "/lab/pi-1/cmd", prefix + "/lab/pi-2/ack"}
	p2 := func() paho.Client {
		c, err := testenv.MQTTClient(broker, "edgebench-lab-pi-2", "pi-2", "two")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, topic := range denied {
		c := p2()
		c.Publish(topic, 1, false, fb).WaitTimeout(5 * time.Second)
		c.Disconnect(0)
	}
	sub := p2()
	for _, filter := range []string{prefix + "/lab/pi-1/cmd", prefix + "/#", prefix + "/lab/+/result"} {
		tok := sub.Subscribe(filter, 1, nil)
		tok.WaitTimeout(5 * time.Second)
		if st, ok := tok.(*paho.SubscribeToken); ok && tok.Error() == nil {
			if q := st.Result()[filter]; q < 0x80 {
				t.Errorf("pi-2 subscribed to %s (granted %d)", filter, q)
			}
		}
	}
	// A sentinel on pi-2's own heartbeat from a later connection: once the
	// watcher has it, anything pi-2 sent before would have arrived too.
	sub.Publish(prefix+"/lab/pi-2/heartbeat", 1, false, []byte{0x80}).WaitTimeout(5 * time.Second)
	sub.Disconnect(0)
	testenv.Until(t, "sentinel", func() bool { return count(prefix+"/lab/pi-2/heartbeat") > 0 })
	for _, topic := range denied {
		if n := count(topic); n != 0 {
			t.Errorf("pi-2's publish to %s got through (%d)", topic, n)
		}
	}
	if _, err := col.Store().Result(ctx, forged.ID); err == nil {
		t.Error("forged result stored")
	}

	// A malformed result is dropped without stopping ingest; a duplicate
	// is stored once.
	p1, err := testenv.MQTTClient(broker, "edgebench-lab-pi-1-raw", "pi-1", "one")
	if err == nil {
		p1.Disconnect(0)
		t.Fatal("pi-1 connected with a second client id")
	}
	if err := d1.Publish(ctx, prefix+"/lab/pi-1/result", 1, false, []byte("\xde\xad\xbe\xef")); err != nil {
		t.Fatal(err)
	}
	testenv.Until(t, "malformed counted", func() bool { return col.Stats().Malformed >= 1 })
	raw, _ := res.MarshalMsg(nil)
	if err := d1.Publish(ctx, prefix+"/lab/pi-1/result", 1, false, raw); err != nil {
		t.Fatal(err)
	}
	testenv.Until(t, "duplicate counted", func() bool { return col.Stats().Duplicates >= 1 })
	res2 := storetest.FakeResult(rng, "lab", "pi-1", map[string]string{"server": "kangle"}, time.Now(), 1200, 600)
	if err := d1.PublishResult(ctx, res2); err != nil {
		t.Fatal(err)
	}
	if err := d1.WaitAck(ctx, res2.ID); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := col.Store().CountResults(ctx); n != 2 {
		t.Fatalf("%d results stored, want 2", n)
	}

	// Trigger through the HTTP API reaches the device's command handler.
	got := make(chan *wire.Command, 4)
	if err := d1.SubscribeCommands(func(_ context.Context, c *wire.Command) {
		select {
		case got <- c:
		default:
		}
	}); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(scheduledb.TriggerRequest{Select: map[string]string{"site": "attic"},
		Spec: wire.LoadTestSpec{URL: "http://127.0.0.1:8080/", Connections: 4, DurationMS: 1000, KeepAlive: true}})
	resp, err := http.Post("http://"+col.WebAddr()+"/api/trigger", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var trig Triggered
	json.NewDecoder(resp.Body).Decode(&trig)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(trig.Devices) != 1 || trig.Devices[0] != "lab/pi-1" {
		t.Fatalf("trigger: %d %+v", resp.StatusCode, trig)
	}
	select {
	case c := <-got:
		if c.ID != trig.CommandID || c.Spec.LoadTest == nil || c.Spec.LoadTest.Connections != 4 {
			t.Errorf("command %+v", c)
		}
	case <-ctx.Done():
		t.Fatal("command never arrived")
	}
	if _, err := col.Trigger(ctx, scheduledb.TriggerRequest{Select: map[string]string{"site": "cellar"}, Spec: wire.LoadTestSpec{URL: "http://127.0.0.1/"}}); err == nil {
		t.Error("selection of nothing accepted")
	}
	// What the devices' decoder would refuse is not sent: a key with the
	// CA bundle, streams without HTTP/2.
	withKey := wire.LoadTestSpec{URL: "https://127.0.0.1/", Connections: 1, DurationMS: 1000,
		TLS: &wire.TLSSpec{CACerts: append(wiretest.CABundle(t), "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"...)}}
	body, _ = json.Marshal(scheduledb.TriggerRequest{Device: "pi-1", Spec: withKey})
	resp, err = http.Post("http://"+col.WebAddr()+"/api/trigger", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode == 200 || !strings.Contains(string(msg), "private key") {
		t.Errorf("a key in the CA bundle: %d %s", resp.StatusCode, msg)
	}
	if _, err := col.Trigger(ctx, scheduledb.TriggerRequest{Device: "pi-1", Spec: wire.LoadTestSpec{URL: "http://127.0.0.1/", Streams: 10}}); !errors.Is(err, wire.ErrMalformed) {
		t.Errorf("streams without HTTP/2: %v", err)
	}
	select {
	case c := <-got:
		t.Errorf("a refused trigger sent %+v", c)
	default:
	}

	// Restart on the same file: nothing lost, a resent result not doubled.
	if err := d1.Close(); err != nil {
		t.Fatal(err)
	}
	if err := col.Close(); err != nil {
		t.Fatal(err)
	}
	closed = true
	col2 := startCollector(t, Config{DB: db, Listen: listen, Accounts: testAccounts()})
	defer col2.Close()
	d1b := device(t, broker, "lab", "pi-1", "one")
	defer d1b.Close()
	if err := d1b.PublishResult(ctx, res); err != nil {
		t.Fatal(err)
	}
	if err := d1b.WaitAck(ctx, res.ID); err != nil {
		t.Fatal(err)
	}
	if n, runs, _ := col2.Store().CountResults(ctx); n != 2 || runs != 2 {
		t.Fatalf("after restart: %d results %d runs, want 2 2", n, runs)
	}
	if s := col2.Stats(); s.Duplicates != 1 || s.Stored != 0 {
		t.Errorf("after restart: %+v", s)
	}
}

// TestCollectorsShareOnePostgres: two collectors of a share group behind
// mosquitto, with one PostgreSQL store, split the results (each stores
// some, none is stored twice), store every event and heartbeat once, and
// each one's API, pages and triggers see the whole fleet.
func TestCollectorsShareOnePostgres(t *testing.T) {
	broker := testenv.Mosquitto(t)
	db := testenv.PostgresDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var cols []*Collector
	for i := range 2 {
		c := startCollector(t, Config{DB: db, Broker: broker, Share: "ingest", ClientID: fmt.Sprintf("collector-%d", i)})
		defer c.Close()
		cols = append(cols, c)
	}
	devs := map[string]*transport.Client{}
	cmds := map[string]chan string{}
	for _, id := range []string{"pi-1", "pi-2"} {
		d := device(t, broker, "lab", id, "")
		defer d.Close()
		ch := make(chan string, 4)
		if err := d.SubscribeCommands(func(_ context.Context, cmd *wire.Command) { ch <- cmd.ID }); err != nil {
			t.Fatal(err)
		}
		devs[id], cmds[id] = d, ch
	}
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 10
	for id, d := range devs {
		for range n {
			r := storetest.FakeResult(rng, "lab", id, nil, time.Now(), 500, 500)
			if err := d.PublishResult(ctx, r); err != nil {
				t.Fatal(err)
			}
			if err := d.WaitAck(ctx, r.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	if nres, nruns, err := cols[0].Store().CountResults(ctx); err != nil || nres != 2*n || nruns != 2*n {
		t.Errorf("stored %d results, %d runs (%v), want %d each", nres, nruns, err, 2*n)
	}
	var stored int64
	for i, c := range cols {
		st := c.Stats()
		t.Logf("collector %d: %+v", i, st)
		if st.Stored == 0 {
			t.Errorf("collector %d stored nothing: the results were not split", i)
		}
		stored += st.Stored + st.Duplicates
	}
	if stored != 2*n {
		t.Errorf("the collectors took %d results, want %d", stored, 2*n)
	}

	// Events of a command, and heartbeats, each stored once.
	sent, err := cols[0].Trigger(ctx, scheduledb.TriggerRequest{Fleet: "lab", Device: "pi-1",
		Spec: wire.LoadTestSpec{URL: "http://127.0.0.1/", Connections: 1, DurationMS: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	cmdID := sent.CommandID
	select {
	case <-cmds["pi-1"]:
	case <-ctx.Done():
		t.Fatal("the command never reached pi-1")
	}
	for seq, state := range []wire.EventState{wire.StateAccepted, wire.StateRunning, wire.StateSucceeded} {
		ev := &wire.Event{V: wire.SchemaVersion, CommandID: cmdID, Seq: uint32(seq + 1), State: state, At: time.Now().UTC()}
		if err := devs["pi-1"].PublishEvent(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Until(t, "the events stored", func() bool {
		evs, err := cols[1].Store().Events(ctx, cmdID)
		return err == nil && len(evs) == 3
	})
	testenv.Until(t, "both devices' heartbeats", func() bool {
		for id, d := range devs {
			d.PublishHeartbeat(ctx, &wire.Heartbeat{V: wire.SchemaVersion, At: time.Now().UTC(), UptimeS: 42, CommandID: id})
		}
		ds, err := cols[0].Store().Devices(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for _, d := range ds {
			if d.Heartbeat != nil && d.Heartbeat.UptimeS == 42 {
				got++
			}
		}
		return got == 2
	})

	// Each collector's API and fleet page show both devices online, and
	// each one triggers a test on a device whose results the other stored.
	for i, c := range cols {
		var ds []store.Device
		testenv.Until(t, fmt.Sprintf("collector %d's API to list the fleet", i), func() bool {
			resp, err := http.Get("http://" + c.WebAddr() + "/api/devices")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			ds = nil
			if err := json.NewDecoder(resp.Body).Decode(&ds); err != nil {
				t.Fatal(err)
			}
			return len(ds) == 2 && ds[0].Online && ds[1].Online && ds[0].LastResult != "" && ds[1].LastResult != ""
		})
		resp, err := http.Get("http://" + c.WebAddr() + "/")
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(page), "pi-1") || !strings.Contains(string(page), "pi-2") {
			t.Errorf("collector %d's fleet page lacks a device", i)
		}
		target := []string{"pi-2", "pi-1"}[i]
		tr, err := c.Trigger(ctx, scheduledb.TriggerRequest{Fleet: "lab", Device: target,
			Spec: wire.LoadTestSpec{URL: "http://127.0.0.1/", Connections: 1, DurationMS: 1000}})
		if err != nil {
			t.Fatalf("collector %d trigger: %v", i, err)
		}
		select {
		case id := <-cmds[target]:
			if id != tr.CommandID {
				t.Errorf("%s got command %s, want %s", target, id, tr.CommandID)
			}
		case <-ctx.Done():
			t.Fatalf("collector %d's command never reached %s", i, target)
		}
	}
}

// TestAPIGuard: with a token the API answers only requests that carry it
// (the pages stay open); a trigger must be JSON and same-origin; a web
// address off loopback is refused without a token.
func TestAPIGuard(t *testing.T) {
	col := startCollector(t, Config{DB: filepath.Join(t.TempDir(), "g.db"), Listen: testenv.FreeAddr(t), Accounts: testAccounts(), APIToken: "s3cret"})
	defer col.Close()
	base := "http://" + col.WebAddr()
	do := func(method, path, ctype, auth string, hdr map[string]string) int {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(`{"device":"pi-9","spec":{"u":"http://127.0.0.1/"}}`))
		if err != nil {
			t.Fatal(err)
		}
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		name         string
		method, path string
		ctype, auth  string
		hdr          map[string]string
		want         int
	}{
		{"page without token", "GET", "/", "", "", nil, 200},
		{"api without token", "GET", "/api/devices", "", "", nil, 401},
		{"api with a wrong token", "GET", "/api/devices", "", "Bearer s3cres", nil, 401},
		{"api with the token", "GET", "/api/devices", "", "Bearer s3cret", nil, 200},
		{"trigger without token", "POST", "/api/trigger", "application/json", "", nil, 401},
		{"trigger as text/plain", "POST", "/api/trigger", "text/plain", "Bearer s3cret", nil, 415},
		{"trigger from another site", "POST", "/api/trigger", "application/json", "Bearer s3cret",
			map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"}, 403},
		// Reaches the trigger itself, which knows no device pi-9.
		{"trigger", "POST", "/api/trigger", "application/json; charset=utf-8", "Bearer s3cret", nil, 400},
	} {
		if got := do(c.method, c.path, c.ctype, c.auth, c.hdr); got != c.want {
			t.Errorf("%s: status %d, want %d", c.name, got, c.want)
		}
	}
	_, err := Start(context.Background(), Config{DB: filepath.Join(t.TempDir(), "o.db"), Listen: testenv.FreeAddr(t), Accounts: testAccounts(),
		Web: "0.0.0.0:0", Log: zaptest.NewLogger(t)})
	if err == nil || !strings.Contains(err.Error(), "API token") {
		t.Errorf("web on 0.0.0.0 without a token: %v", err)
	}
}

// TestStoresThePayloadAsItCame: a result from a newer sender, with a field
// this collector does not know, is stored byte for byte, so the field is
// there when a newer collector reads the store.
func TestStoresThePayloadAsItCame(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	listen := testenv.FreeAddr(t)
	db := filepath.Join(t.TempDir(), "n.db")
	col := startCollector(t, Config{DB: db, Listen: listen, Accounts: testAccounts(), Web: "-"})
	defer col.Close()
	d1 := device(t, "tcp://"+listen, "lab", "pi-1", "one")
	defer d1.Close()
	res := storetest.FakeResult(rand.New(rand.NewPCG(5, 6)), "lab", "pi-1", map[string]string{"server": "nginx"}, time.Now(), 1000, 800)
	res.V = wire.SchemaVersion
	plain, err := res.MarshalMsg(nil)
	if err != nil {
		t.Fatal(err)
	}
	// The same map with one more key at the end.
	n, rest, err := msgp.ReadMapHeaderBytes(plain)
	if err != nil {
		t.Fatal(err)
	}
	newer := msgp.AppendMapHeader(nil, n+1)
	newer = append(newer, rest...)
	newer = msgp.AppendString(msgp.AppendString(newer, "zz_future"), "kept")
	if err := d1.Publish(ctx, prefix+"/lab/pi-1/result", 1, false, newer); err != nil {
		t.Fatal(err)
	}
	testenv.Until(t, "the result stored", func() bool {
		_, err := col.Store().Result(ctx, res.ID)
		return err == nil
	})
	// The payload as it came, while its samples are kept; the summary,
	// kept longer, keeps the field this collector does not know.
	var raw, summary []byte
	if err := sqliteDB(t, db).QueryRowContext(ctx, "SELECT sa.raw, r.raw FROM results r JOIN result_samples sa ON sa.result_id = r.id WHERE r.id = ?",
		res.ID).Scan(&raw, &summary); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(raw, newer) {
		t.Errorf("stored %d bytes, received %d: not the payload as it came (has zz_future: %v)",
			len(raw), len(newer), bytes.Contains(raw, []byte("zz_future")))
	}
	if !bytes.HasSuffix(summary, msgp.AppendString(msgp.AppendString(nil, "zz_future"), "kept")) || len(summary) >= len(newer) {
		t.Errorf("the summary (%d bytes of %d) lost the newer field, or kept the samples", len(summary), len(newer))
	}
}

// TestHeartbeatsStored: each device's latest heartbeat lands in its row
// (written in batches); a later one replaces it, an older one that comes
// late does not.
func TestHeartbeatsStored(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	listen := testenv.FreeAddr(t)
	col := startCollector(t, Config{DB: filepath.Join(t.TempDir(), "hb.db"), Listen: listen, Accounts: testAccounts(), Web: "-"})
	defer col.Close()
	devs := map[string]*transport.Client{
		"pi-1": device(t, "tcp://"+listen, "lab", "pi-1", "one"),
		"pi-2": device(t, "tcp://"+listen, "lab", "pi-2", "two"),
	}
	for _, d := range devs {
		defer d.Close()
	}
	beat := func(id, cmd string, up int64, at time.Time) {
		t.Helper()
		hb := &wire.Heartbeat{V: wire.SchemaVersion, At: at.UTC(), Busy: cmd != "", CommandID: cmd, UptimeS: up}
		if err := devs[id].PublishHeartbeat(ctx, hb); err != nil {
			t.Fatal(err)
		}
	}
	seen := func(want map[string]int64) func() bool {
		return func() bool {
			ds, err := col.Store().Devices(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got := 0
			for _, d := range ds {
				if d.Heartbeat != nil && d.Heartbeat.UptimeS == want[d.ID] {
					got++
				}
			}
			return got == len(want)
		}
	}
	// Heartbeats are QoS 0: send until the subscriptions are in place.
	testenv.Until(t, "both heartbeats stored", func() bool {
		beat("pi-1", "", 10, time.Now())
		beat("pi-2", "01JCMD", 20, time.Now())
		return seen(map[string]int64{"pi-1": 10, "pi-2": 20})()
	})
	beat("pi-1", "01JNEXT", 11, time.Now())
	testenv.Until(t, "the later heartbeat", seen(map[string]int64{"pi-1": 11, "pi-2": 20}))
	// A heartbeat from an hour ago, then one from pi-2 to know when it
	// has been through, and one more flush.
	beat("pi-1", "01JOLD", 9, time.Now().Add(-time.Hour))
	beat("pi-2", "01JCMD", 21, time.Now())
	testenv.Until(t, "pi-2's next heartbeat", seen(map[string]int64{"pi-1": 11, "pi-2": 21}))
	time.Sleep(2 * heartbeatFlush)
	if !seen(map[string]int64{"pi-1": 11, "pi-2": 21})() {
		t.Error("an older heartbeat replaced a newer one")
	}
	ds, _ := col.Store().Devices(ctx)
	for _, d := range ds {
		if want := map[string]string{"pi-1": "01JNEXT", "pi-2": "01JCMD"}[d.ID]; d.BusyCommand != want {
			t.Errorf("%s busy with %q, want %q", d.ID, d.BusyCommand, want)
		}
	}
}
