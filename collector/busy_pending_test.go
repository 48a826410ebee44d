package collector

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/store/scheduledb"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/wire"
)

// TestScheduleSeesACommandJustSent: a command sent to a device keeps it
// busy for a schedule's firing from the moment it is sent, before the
// device's heartbeat can say so (it answers nothing here, and sends no
// heartbeat), until the device ends it or it expires unanswered; for the
// loader as for the target of a run across two devices. The firing's own
// command is one: the next firing right after it misses the device.
func TestScheduleSeesACommandJustSent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	col, loader, target := pairCollector(t)
	// schedule adds an hourly schedule of the laptop (loading pi3 with
	// target), whose firings start fires.
	schedule := func(name, target string) (start time.Time) {
		t.Helper()
		sch := storetest.Schedule(name)
		sch.Every, sch.Trigger.Device, sch.Trigger.TargetDevice = time.Hour, "laptop", target
		sch.Trigger.Spec.URL = "http://192.168.2.13:8080/"
		start = time.Now()
		if err := col.Store().AddSchedule(ctx, sch, start); err != nil {
			t.Fatal(err)
		}
		return start
	}
	start := schedule("one", "")
	send := func(dev string, ttl time.Duration) string {
		t.Helper()
		tr, err := col.Trigger(ctx, scheduledb.TriggerRequest{Fleet: "lab", Device: dev, TTL: ttl,
			Spec: wire.LoadTestSpec{URL: "http://127.0.0.1/", Connections: 1, DurationMS: 1000}})
		if err != nil {
			t.Fatal(err)
		}
		return tr.CommandID
	}
	check := func(what string, r scheduledb.ScheduleRun, commands int, missed ...scheduledb.Missed) {
		t.Helper()
		if len(r.Commands) != commands || !slices.Equal(r.Missed, missed) || r.Error != "" {
			t.Errorf("%s: commands %v missed %v error %q, want %d sent, missed %v", what, r.Commands, r.Missed, r.Error, commands, missed)
		}
	}

	// A command just sent to the laptop, not answered: the firing misses
	// it, busy with that command.
	x := send("laptop", time.Minute)
	loader.waitCommands(wire.KindLoadTest, 1)
	check("a firing just after a command was sent", fireNth(ctx, t, col, "one", start, 1), 0,
		scheduledb.Missed{Device: "lab/laptop", Reason: "busy with command " + x})

	// The laptop rejects it: idle. The firing's own command then keeps it
	// busy for the next firing.
	loader.event(x, 0, wire.StateRejected, "busy", nil, "")
	testenv.Until(t, "the rejection stored", func() bool {
		evs, _ := col.Store().Events(ctx, x)
		return len(evs) == 1
	})
	r := fireNth(ctx, t, col, "one", start, 2)
	check("a firing once the command was rejected", r, 1)
	if len(r.Commands) != 1 {
		t.FailNow()
	}
	y := r.Commands[0]
	check("a firing just after the last one's command", fireNth(ctx, t, col, "one", start, 3), 0,
		scheduledb.Missed{Device: "lab/laptop", Reason: "busy with command " + y})
	loader.event(y, 0, wire.StateFailed, "no server", nil, "")
	if err := col.Store().RemoveSchedule(ctx, "one"); err != nil {
		t.Fatal(err)
	}

	// The target: a command just sent to pi3 makes the run across two
	// devices miss it; one that expired unanswered does not.
	z := send("pi3", time.Minute)
	target.waitCommands(wire.KindLoadTest, 1)
	testenv.Until(t, "the laptop's failure stored", func() bool {
		evs, _ := col.Store().Events(ctx, y)
		return len(evs) == 1
	})
	start = schedule("pair", "pi3")
	check("a run across two devices just after a command was sent to its target", fireNth(ctx, t, col, "pair", start, 1), 0,
		scheduledb.Missed{Device: "lab/pi3", Reason: "the target is busy with command " + z})
	target.event(z, 0, wire.StateSucceeded, "", nil, "")
	send("pi3", 300*time.Millisecond)
	target.waitCommands(wire.KindLoadTest, 2)
	time.Sleep(500 * time.Millisecond)
	testenv.Until(t, "pi3's success stored", func() bool {
		evs, _ := col.Store().Events(ctx, z)
		return len(evs) == 1
	})
	check("a run across two devices once its target's command expired unanswered", fireNth(ctx, t, col, "pair", start, 2), 1)
}
