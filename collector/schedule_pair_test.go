package collector

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/scheduledb"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/wire"
)

// TestScheduleAcrossTwoDevices: a schedule whose trigger names a target
// device fires a run across two devices (a pair in the store, the watch
// at the target, the firing's devices both ends), and its busy and
// online checks cover the target as well as the loader: a firing while
// the target runs another command, or while it is offline, is recorded
// missed with the target's reason, and nothing reaches either device.
func TestScheduleAcrossTwoDevices(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	col, loader, target := pairCollector(t)
	sch := storetest.Schedule("pair")
	sch.Every, sch.Trigger.Device, sch.Trigger.TargetDevice = time.Hour, "laptop", "pi3"
	sch.Trigger.Spec.URL = "http://192.168.2.13:8080/"
	start := time.Now()
	if err := col.Store().AddSchedule(ctx, sch, start); err != nil {
		t.Fatal(err)
	}
	firing := func(n int) scheduledb.ScheduleRun { return fireNth(ctx, t, col, "pair", start, n) }

	// Both idle: a pair, its watch at pi3, both devices in the firing.
	r := firing(1)
	if len(r.Commands) != 1 || len(r.Missed) != 0 || r.Error != "" ||
		!slices.Equal(r.Devices, []string{"lab/laptop", "lab/pi3"}) {
		t.Fatalf("firing with both idle: commands %v devices %v missed %v error %q, want one pair of lab/laptop and lab/pi3",
			r.Commands, r.Devices, r.Missed, r.Error)
	}
	p, err := col.Store().Pair(ctx, r.Commands[0])
	if err != nil {
		t.Fatalf("the firing's command %s is no pair: %v", r.Commands[0], err)
	}
	if p.Fleet+"/"+p.Loader != "lab/laptop" || p.TargetFleet+"/"+p.Target != "lab/pi3" {
		t.Errorf("the pair's loader %s/%s target %s/%s, want lab/laptop and lab/pi3", p.Fleet, p.Loader, p.TargetFleet, p.Target)
	}
	watch := target.waitCommands(wire.KindProbe, 1)[0]
	if watch.ID != p.WatchID || watch.Spec.Probe == nil || watch.Spec.Probe.URL != sch.Trigger.Spec.URL {
		t.Errorf("pi3's watch %s for %+v, want the pair's %s for %s", watch.ID, watch.Spec.Probe, p.WatchID, sch.Trigger.Spec.URL)
	}
	pairEnded(t, col, p.ID) // its watch never runs: it fails, and nothing is left busy

	// pi3 runs a command of its own: the next firing misses it.
	tr, err := col.Trigger(ctx, scheduledb.TriggerRequest{Fleet: "lab", Device: "pi3",
		Spec: wire.LoadTestSpec{URL: "http://127.0.0.1/", Connections: 1, DurationMS: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	target.waitCommands(wire.KindLoadTest, 1)
	target.event(tr.CommandID, 0, wire.StateAccepted, "", nil, "")
	target.event(tr.CommandID, 0, wire.StateRunning, "", nil, "")
	if err := target.c.PublishHeartbeat(ctx, &wire.Heartbeat{V: wire.SchemaVersion, At: time.Now().UTC(), Busy: true, CommandID: tr.CommandID}); err != nil {
		t.Fatal(err)
	}
	testenv.Until(t, "pi3 busy", func() bool {
		d := pi3(t, col)
		return d != nil && d.BusyCommand == tr.CommandID
	})
	r = firing(2)
	want := []scheduledb.Missed{{Device: "lab/pi3", Reason: "the target is busy with command " + tr.CommandID}}
	if len(r.Commands) != 0 || len(r.Devices) != 0 || !slices.Equal(r.Missed, want) {
		t.Errorf("firing while pi3 is busy: commands %v devices %v missed %v, want missed %v", r.Commands, r.Devices, r.Missed, want)
	}

	// pi3 ends its command and goes offline: missed again, offline.
	target.event(tr.CommandID, 0, wire.StateSucceeded, "", nil, "")
	target.c.Close()
	testenv.Until(t, "pi3 offline and idle", func() bool {
		d := pi3(t, col)
		return d != nil && !d.Online && d.BusyCommand == ""
	})
	r = firing(3)
	want = []scheduledb.Missed{{Device: "lab/pi3", Reason: "the target is offline"}}
	if len(r.Commands) != 0 || len(r.Devices) != 0 || !slices.Equal(r.Missed, want) {
		t.Errorf("firing while pi3 is offline: commands %v devices %v missed %v, want missed %v", r.Commands, r.Devices, r.Missed, want)
	}
	if n := len(target.commands(wire.KindProbe)); n != 1 {
		t.Errorf("pi3 got %d watches, want the first firing's only", n)
	}
	if n := len(loader.commands(wire.KindLoadTest)); n != 0 {
		t.Errorf("laptop got %d loads, want none (the one pair's watch never ran)", n)
	}
}

// pi3 is lab/pi3 as the store knows it, or nil.
func pi3(t *testing.T, col *Collector) *store.Device {
	t.Helper()
	devs, err := col.Store().Devices(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i := range devs {
		if devs[i].Fleet == "lab" && devs[i].ID == "pi3" {
			return &devs[i]
		}
	}
	return nil
}
