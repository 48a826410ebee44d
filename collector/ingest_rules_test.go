package collector

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/broker"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/scheduledb"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/transport"
	"github.com/edgebench/edgebench/wire"
)

// rulesAccounts are testAccounts with a device of another fleet.
func rulesAccounts() *broker.Accounts {
	a := testAccounts()
	a.Devices = append(a.Devices, broker.Account{Fleet: "far", ID: "pi-9", Password: "nine"})
	return a
}

// wantRejected waits for the collector's answer to result id and wants a
// rejection whose reason holds want.
func wantRejected(t *testing.T, ctx context.Context, d *transport.Client, id, want string) {
	t.Helper()
	err := d.WaitAck(ctx, id)
	var re *transport.RejectedError
	if !errors.As(err, &re) || !strings.Contains(re.Reason, want) {
		t.Errorf("result %s: %v, want rejected for %q", id, err, want)
	}
}

// TestResultMayNameOnlyItsOwnCommands: a device with a valid account that
// publishes, over the real broker, a result naming a command sent to
// another device of its fleet, or to another fleet, or never sent, has it
// acked as rejected, counted and not stored: the command's page and
// compare --cmd show only the real results. Results of a command sent to
// the device, by name, by selection or to its whole fleet, are taken.
func TestResultMayNameOnlyItsOwnCommands(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	listen := testenv.FreeAddr(t)
	brokerURL := "tcp://" + listen
	col, logs := startObserved(t, Config{DB: filepath.Join(t.TempDir(), "c.db"), Listen: listen, Accounts: rulesAccounts(),
		Web: "127.0.0.1:0", BrokerLimits: broker.Limits{LogEvery: time.Hour}})
	d1 := device(t, brokerURL, "lab", "pi-1", "one")
	defer d1.Close()
	d2 := device(t, brokerURL, "lab", "pi-2", "two")
	defer d2.Close()
	d9 := device(t, brokerURL, "far", "pi-9", "nine")
	defer d9.Close()
	testenv.Until(t, "three devices online", func() bool {
		devs, _ := col.Store().Devices(ctx)
		return len(devs) == 3
	})
	spec := wire.LoadTestSpec{URL: "http://127.0.0.1:8080/", Connections: 1, DurationMS: 1000}
	toPi1, err := col.Trigger(ctx, scheduledb.TriggerRequest{Fleet: "lab", Device: "pi-1", Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	toLab, err := col.Trigger(ctx, scheduledb.TriggerRequest{Fleet: "lab", Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	toBoth, err := col.Trigger(ctx, scheduledb.TriggerRequest{Select: map[string]string{"site": "attic"}, Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	if len(toBoth.Devices) != 3 {
		t.Fatalf("selection sent to %v", toBoth.Devices)
	}

	rng := rand.New(rand.NewPCG(19, 2))
	publish := func(d *transport.Client, fleet, dev, cmd string) *wire.Result {
		r := storetest.FakeResult(rng, fleet, dev, nil, time.Now(), 1000, 800)
		r.CommandID = cmd
		if err := d.PublishResult(ctx, r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	real := publish(d1, "lab", "pi-1", toPi1.CommandID)
	if err := d1.WaitAck(ctx, real.ID); err != nil {
		t.Fatal(err)
	}
	// pi-2 and far/pi-9 name pi-1's command; pi-9 names lab's fleet
	// command; pi-2 names a command never sent.
	forged := []*wire.Result{publish(d2, "lab", "pi-2", toPi1.CommandID), publish(d9, "far", "pi-9", toPi1.CommandID)}
	wantRejected(t, ctx, d2, forged[0].ID, "was not sent to lab/pi-2")
	wantRejected(t, ctx, d9, forged[1].ID, "was not sent to far/pi-9")
	fleetForged := publish(d9, "far", "pi-9", toLab.CommandID)
	wantRejected(t, ctx, d9, fleetForged.ID, "not sent")
	never := publish(d2, "lab", "pi-2", wire.NewID())
	wantRejected(t, ctx, d2, never.ID, "not sent")
	forged = append(forged, fleetForged, never)

	// Taken: the fleet's command by a device of the fleet, and the
	// selection's by each device it went to.
	for _, ok := range []struct {
		d         *transport.Client
		fleet, id string
		cmd       string
	}{{d2, "lab", "pi-2", toLab.CommandID}, {d1, "lab", "pi-1", toBoth.CommandID}, {d2, "lab", "pi-2", toBoth.CommandID}, {d9, "far", "pi-9", toBoth.CommandID}} {
		r := publish(ok.d, ok.fleet, ok.id, ok.cmd)
		if err := ok.d.WaitAck(ctx, r.ID); err != nil {
			t.Errorf("%s/%s's result of %s: %v", ok.fleet, ok.id, ok.cmd, err)
		}
	}
	for _, r := range forged {
		if _, err := col.Store().Result(ctx, r.ID); err == nil {
			t.Errorf("forged result %s of %s/%s stored", r.ID, r.Fleet, r.Device)
		}
	}
	if s := col.Stats(); s.Refused != int64(len(forged)) || s.Rejected != int64(len(forged)) {
		t.Errorf("refused %d, rejected %d, want %d", s.Refused, s.Rejected, len(forged))
	}
	if n := logs.FilterMessage("result refused").Len(); n != 1 {
		t.Errorf("%d lines for %d refusals within the period, want 1", n, len(forged))
	}

	// The command's page and compare --cmd show pi-1's result only.
	get := func(path string) string {
		resp, err := http.Get("http://" + col.WebAddr() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	var st CommandStatus
	if err := json.Unmarshal([]byte(get("/api/commands/"+toPi1.CommandID)), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Results) != 1 || st.Results[0].Device != "pi-1" {
		t.Errorf("command page: %+v", st.Results)
	}
	cmp := get("/api/compare?" + url.Values{"cmd": {toPi1.CommandID}, "by": {"device"}}.Encode())
	if strings.Contains(cmp, "pi-2") || strings.Contains(cmp, "pi-9") || !strings.Contains(cmp, "pi-1") {
		t.Errorf("compare --cmd:\n%s", cmp)
	}
}

// TestResultIDOfAnotherDevice: a result whose id another device's result
// has is answered rejected, over the real broker, and the stored one is
// left as it was; the same id twice in one batch from two devices is
// stored once, for the first, and refused for the other.
func TestResultIDOfAnotherDevice(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	listen := testenv.FreeAddr(t)
	brokerURL := "tcp://" + listen
	col, _ := startObserved(t, Config{DB: filepath.Join(t.TempDir(), "c.db"), Listen: listen, Accounts: rulesAccounts(), Web: "-"})
	d1 := device(t, brokerURL, "lab", "pi-1", "one")
	defer d1.Close()
	d2 := device(t, brokerURL, "lab", "pi-2", "two")
	defer d2.Close()
	rng := rand.New(rand.NewPCG(19, 3))
	mine := storetest.FakeResult(rng, "lab", "pi-1", nil, time.Now(), 1000, 800)
	if err := d1.PublishResult(ctx, mine); err != nil {
		t.Fatal(err)
	}
	if err := d1.WaitAck(ctx, mine.ID); err != nil {
		t.Fatal(err)
	}
	theirs := storetest.FakeResult(rng, "lab", "pi-2", nil, time.Now(), 5, 5)
	theirs.ID = mine.ID
	if err := d2.PublishResult(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	wantRejected(t, ctx, d2, theirs.ID, "another device's result")
	// pi-1 resending its own is a duplicate, acked.
	raw, _ := mine.MarshalMsg(nil)
	if err := d1.Publish(ctx, prefix+"/lab/pi-1/result", 1, false, raw); err != nil {
		t.Fatal(err)
	}
	testenv.Until(t, "resend counted", func() bool { return col.Stats().Duplicates == 1 })
	if r, err := col.Store().Result(ctx, mine.ID); err != nil || r.Device != "pi-1" {
		t.Errorf("stored: %+v %v", r, err)
	}
	if s := col.Stats(); s.Refused != 1 || s.Stored != 1 {
		t.Errorf("stats %+v", s)
	}

	// In one batch.
	st := storetest.OpenSQLite(t)
	a := storetest.FakeResult(rng, "lab", "pi-1", nil, time.Now(), 1000, 800)
	b := storetest.FakeResult(rng, "lab", "pi-2", nil, time.Now(), 1, 1)
	b.ID = a.ID
	got, err := st.IngestStates(ctx, []store.Incoming{storetest.Incoming(t, a), storetest.Incoming(t, b), storetest.Incoming(t, a)})
	if err != nil {
		t.Fatal(err)
	}
	if want := []store.IngestState{store.IngestNew, store.IngestTaken, store.IngestDuplicate}; !slices.Equal(got, want) {
		t.Errorf("one batch: %v, want %v", got, want)
	}
}

// TestDroppedEventsLoggedSummed: 2,000 undecodable events from a device
// write one warning line, then one line with their number when the period
// ends, not one line each.
func TestDroppedEventsLoggedSummed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	listen := testenv.FreeAddr(t)
	brokerURL := "tcp://" + listen
	col, logs := startObserved(t, Config{DB: filepath.Join(t.TempDir(), "c.db"), Listen: listen, Accounts: rulesAccounts(), Web: "-",
		BrokerLimits: broker.Limits{LogEvery: 500 * time.Millisecond}})
	_ = col
	d1 := device(t, brokerURL, "lab", "pi-1", "one")
	defer d1.Close()
	const n = 2000
	for i := range n {
		if err := d1.Publish(ctx, prefix+"/lab/pi-1/event", 1, false, []byte{0x81, 0xa1, 'v', byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Until(t, "the sum logged", func() bool { return logs.FilterMessage("event dropped again").Len() > 0 })
	first := logs.FilterMessage("event dropped").Len()
	var summed int64
	lines := logs.FilterMessage("event dropped again").All()
	for _, l := range lines {
		summed += l.ContextMap()["times"].(int64)
	}
	testenv.Until(t, "all summed", func() bool {
		summed = 0
		lines = logs.FilterMessage("event dropped again").All()
		for _, l := range lines {
			summed += l.ContextMap()["times"].(int64)
		}
		first = logs.FilterMessage("event dropped").Len()
		return summed+int64(first) == n
	})
	// At most two lines a period (500 ms: a first one, a sum) while they arrive, however long
	// a loaded box takes to bring them (the device's quota paces them too).
	span := lines[len(lines)-1].Time.Sub(logs.FilterMessage("event dropped").All()[0].Time)
	if most := 2 * (2 + int(span/(500*time.Millisecond))); first+len(lines) > most {
		t.Errorf("%d lines (%d first) for %d dropped events over %v, want at most %d", first+len(lines), first, n, span, most)
	}
}

// TestAbsurdDeviceTimesRefused: over the real broker, a result stamped in
// year 5138, before 1970, in 2019, or two days ahead of the collector (or
// with such a run) is acked as rejected with the reason and not stored,
// in SQLite and in PostgreSQL (where 5138 came back as 2216 and 1969 as
// 1811); one an hour ahead is taken, its time kept as the device said.
// A result id that is not a ULID and an outcome that is not a known
// state are rejected too, not left unanswered or stored.
func TestAbsurdDeviceTimesRefused(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		listen := testenv.FreeAddr(t)
		brokerURL := "tcp://" + listen
		col, _ := startObserved(t, Config{DB: e.DB(t), Listen: listen, Accounts: rulesAccounts(), Web: "-"})
		d1 := device(t, brokerURL, "lab", "pi-1", "one")
		defer d1.Close()
		rng := rand.New(rand.NewPCG(19, 5))
		now := time.Now()
		for _, c := range []struct {
			name string
			edit func(r *wire.Result)
			want string
		}{
			{"year 5138", func(r *wire.Result) { r.CreatedAt = time.Date(5138, 3, 1, 0, 0, 0, 0, time.UTC) }, "ahead of the collector"},
			{"1969", func(r *wire.Result) { r.CreatedAt = time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC) }, "before 2020"},
			{"2019", func(r *wire.Result) { r.CreatedAt = time.Date(2019, 12, 31, 23, 0, 0, 0, time.UTC) }, "before 2020"},
			{"2 days ahead", func(r *wire.Result) { r.CreatedAt = now.Add(48 * time.Hour) }, "ahead of the collector"},
			{"a run in 2096", func(r *wire.Result) { r.Runs[0].StartedAt = time.Date(2096, 1, 1, 0, 0, 0, 0, time.UTC) }, "run 1 started_at"},
			{"outcome pwned", func(r *wire.Result) { r.Outcome = "pwned" }, `outcome "pwned"`},
			{"id not a ULID", func(r *wire.Result) { r.ID = "not-a-ulid" }, "not a ULID"},
		} {
			r := storetest.FakeResult(rng, "lab", "pi-1", nil, now, 1000, 800)
			c.edit(r)
			if err := d1.PublishResult(ctx, r); err != nil {
				t.Fatal(err)
			}
			wantRejected(t, ctx, d1, r.ID, c.want)
			if _, err := col.Store().Result(ctx, r.ID); err == nil {
				t.Errorf("%s: stored", c.name)
			}
		}
		ahead := storetest.FakeResult(rng, "lab", "pi-1", nil, now.Add(time.Hour), 1000, 800)
		if err := d1.PublishResult(ctx, ahead); err != nil {
			t.Fatal(err)
		}
		if err := d1.WaitAck(ctx, ahead.ID); err != nil {
			t.Fatal(err)
		}
		if r, err := col.Store().Result(ctx, ahead.ID); err != nil || !r.CreatedAt.Equal(ahead.CreatedAt) {
			t.Errorf("an hour ahead: %v %v", r, err)
		}
		if n, _, _ := col.Store().CountResults(ctx); n != 1 {
			t.Errorf("%d stored, want 1", n)
		}
	})
}

// TestHeartbeatFromTheFarFuture: a heartbeat stamped in year 5138 (which
// the store's ns overflowed to 2216) is dropped, so it does not hold back
// every later heartbeat of the device.
func TestHeartbeatFromTheFarFuture(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	listen := testenv.FreeAddr(t)
	brokerURL := "tcp://" + listen
	col, logs := startObserved(t, Config{DB: filepath.Join(t.TempDir(), "hb.db"), Listen: listen, Accounts: rulesAccounts(), Web: "-"})
	d1 := device(t, brokerURL, "lab", "pi-1", "one")
	defer d1.Close()
	beat := func(up int64, at time.Time) {
		if err := d1.PublishHeartbeat(ctx, &wire.Heartbeat{V: wire.SchemaVersion, At: at.UTC(), UptimeS: up}); err != nil {
			t.Fatal(err)
		}
	}
	uptime := func() int64 {
		ds, err := col.Store().Devices(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			if d.ID == "pi-1" && d.Heartbeat != nil {
				return d.Heartbeat.UptimeS
			}
		}
		return 0
	}
	// Heartbeats are QoS 0: send until one is through.
	testenv.Until(t, "a heartbeat stored", func() bool {
		beat(99, time.Date(5138, 1, 1, 0, 0, 0, 0, time.UTC))
		beat(10, time.Now())
		return uptime() != 0
	})
	testenv.Until(t, "a heartbeat after the far future's", func() bool {
		beat(12, time.Now())
		return uptime() == 12
	})
	if logs.FilterMessage("heartbeat dropped").Len() == 0 {
		t.Error("the far future's heartbeat not logged as dropped")
	}
}
