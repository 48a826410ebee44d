package collector

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/broker"
	"github.com/edgebench/edgebench/collector/store/scheduledb"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/transport"
	"github.com/edgebench/edgebench/wire"
)

// TestEventsInsideTheQuota is issue 31's first attack, over the real
// broker: a device with a valid account publishes events with a 200 KiB
// reason on made-up command ids (on main at 588e3ea, 768 of 1,000 such
// were stored and took 158 MB). Each is refused, counted and logged
// summed; an event may name only a command sent to its device (not
// another device's, not another fleet's); the reason of one that is taken
// is cut to the quota; events count in the device's rate of events and
// in its bytes of the day, which results share.
func TestEventsInsideTheQuota(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	listen := testenv.FreeAddr(t)
	brokerURL := "tcp://" + listen
	acc := rulesAccounts()
	acc.Devices = append(acc.Devices, broker.Account{Fleet: "lab", ID: "pi-3", Password: "three",
		Quota: &broker.Quota{EventsPerMinute: 1, BurstEvents: 3, BytesPerDay: 300 << 10, MaxLabelBytes: -1}})
	col, logs := startObserved(t, Config{DB: filepath.Join(t.TempDir(), "e.db"), Listen: listen, Accounts: acc,
		Web: "-", BrokerLimits: broker.Limits{LogEvery: 500 * time.Millisecond}})
	d1 := device(t, brokerURL, "lab", "pi-1", "one")
	defer d1.Close()
	d9 := device(t, brokerURL, "far", "pi-9", "nine")
	defer d9.Close()
	d3 := device(t, brokerURL, "lab", "pi-3", "three")
	defer d3.Close()
	testenv.Until(t, "three devices known", func() bool {
		devs, _ := col.Store().Devices(ctx)
		return len(devs) == 3
	})
	spec := wire.LoadTestSpec{URL: "http://127.0.0.1:8080/", Connections: 1, DurationMS: 1000}
	toPi1, err := col.Trigger(ctx, scheduledb.TriggerRequest{Fleet: "lab", Device: "pi-1", Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	toPi3, err := col.Trigger(ctx, scheduledb.TriggerRequest{Fleet: "lab", Device: "pi-3", Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 200<<10)
	send := func(d *transport.Client, cmd string, seq uint32, st wire.EventState, reason string) {
		t.Helper()
		if err := d.PublishEvent(ctx, &wire.Event{V: wire.SchemaVersion, CommandID: cmd, Seq: seq, State: st, Reason: reason,
			At: time.Now().UTC()}); err != nil {
			t.Fatal(err)
		}
	}
	refused := func(n int64) {
		t.Helper()
		testenv.Until(t, "the events refused", func() bool { return col.Stats().EventsRefused >= n })
		if got := col.Stats().EventsRefused; got != n {
			t.Fatalf("%d events refused, want %d", got, n)
		}
	}

	// 50 events of 200 KiB on made-up command ids: none stored.
	first := time.Now()
	var made []string
	for i := range 50 {
		made = append(made, wire.NewID())
		send(d1, made[i], uint32(i), wire.StateRejected, big)
	}
	refused(50)
	// pi-1's own command: taken, its reason cut to the default 1 KiB.
	send(d1, toPi1.CommandID, 1, wire.StateRejected, big)
	testenv.Until(t, "pi-1's event stored", func() bool {
		evs, _ := col.Store().Events(ctx, toPi1.CommandID)
		return len(evs) == 1
	})
	evs, _ := col.Store().Events(ctx, toPi1.CommandID)
	if r := evs[0].Reason; len(r) > 1100 || !strings.HasPrefix(r, strings.Repeat("x", 1024)) || !strings.HasSuffix(r, "(203776 bytes cut)") {
		t.Errorf("the reason kept is %d bytes: %.40q...%q", len(r), r, r[max(0, len(r)-30):])
	}
	// Another fleet's device naming pi-1's command, and pi-1's own
	// device... of the same fleet naming pi-3's: refused.
	send(d9, toPi1.CommandID, 2, wire.StateRejected, "forged")
	send(d1, toPi3.CommandID, 2, wire.StateRunning, "forged")
	refused(52)
	span := time.Since(first) // the refusals' time, at most
	for _, id := range append(made, toPi1.CommandID, toPi3.CommandID) {
		evs, err := col.Store().Events(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.Reason == "forged" || (id != toPi1.CommandID && len(evs) > 0) {
				t.Errorf("event stored for %s: %s/%s %s %.20q", id, e.Fleet, e.Device, e.State, e.Reason)
			}
		}
	}
	// One line at once, then the others of each period summed in one: at
	// most two lines a period of 500 ms the refusals spanned (3 periods
	// on a quiet box; more when the box is loaded, never one a refusal).
	logged := func() (lines int, times int64) {
		lines = logs.FilterMessage("event refused").Len()
		times = int64(lines)
		for _, l := range logs.FilterMessage("event refused again").All() {
			lines, times = lines+1, times+l.ContextMap()["times"].(int64)
		}
		return lines, times
	}
	testenv.Until(t, "the refusals summed", func() bool { _, n := logged(); return n == 52 })
	if lines, _ := logged(); lines > 2*(int(span/(500*time.Millisecond))+1) {
		t.Errorf("52 refusals within %v logged in %d lines", span, lines)
	}
	if first := logs.FilterMessage("event refused").All(); !strings.Contains(first[0].ContextMap()["reason"].(string), "was not sent to lab/pi-1") {
		t.Errorf("first refusal logged as %v", first[0])
	}
	// pi-3: 3 events a burst, 1 a minute; 300 KiB a day, events and
	// results together. Each sent once the one before is stored or
	// refused (the collector's workers take them in any order).
	stored := func(n int) {
		t.Helper()
		testenv.Until(t, "pi-3's event stored", func() bool {
			evs, _ := col.Store().Events(ctx, toPi3.CommandID)
			return len(evs) == n
		})
	}
	send(d3, toPi3.CommandID, 1, wire.StateAccepted, big)
	stored(1)
	send(d3, toPi3.CommandID, 2, wire.StateRunning, big) // over the day's bytes
	refused(53)
	send(d3, toPi3.CommandID, 3, wire.StateRunning, "")
	stored(2)
	send(d3, toPi3.CommandID, 4, wire.StateRunning, "") // the burst's third
	stored(3)
	send(d3, toPi3.CommandID, 5, wire.StateSucceeded, "") // over the rate
	refused(54)
	if evs, _ := col.Store().Events(ctx, toPi3.CommandID); len(evs) != 3 || evs[2].Seq != 4 {
		t.Errorf("%d of pi-3's events stored, want 3, the last its 4th: %+v", len(evs), evs)
	}
	// The bytes of its events count against its results too.
	r := &wire.Result{V: wire.SchemaVersion, ID: wire.NewID(), Fleet: "lab", Device: "pi-3", CreatedAt: time.Now().UTC(), Kind: wire.KindLoadTest,
		Outcome: wire.StateSucceeded, CommandID: toPi3.CommandID, Labels: map[string]string{"pad": strings.Repeat("y", 120<<10)},
		Spec: wire.RunSpec{URL: spec.URL, Connections: 1, DurationMS: 1000}}
	if err := d3.PublishResult(ctx, r); err != nil {
		t.Fatal(err)
	}
	wantRejected(t, ctx, d3, r.ID, "bytes in 24 hours")
}
