package collector

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/store/scheduledb"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/wire"
)

// TestScheduleFiresJustAfterARunEnds: a device is busy from the heartbeat
// that says so until its command's terminal event, not until its next
// heartbeat (30 s by default): a command succeeded at 22:34:24.75 and the
// firings at :31, :41 and :51 were recorded missed, "busy with" that same
// command. Over the embedded broker, a device runs a command the
// collector sent, says so in a heartbeat and ends it with its succeeded
// event; a firing while it runs is missed, busy with it, and a firing
// just after its end reaches the device, also when the heartbeat the
// device sent just before the end is written after it (heartbeats are
// written every second). A command still running keeps the device busy.
func TestScheduleFiresJustAfterARunEnds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	listen := testenv.FreeAddr(t)
	col := startCollector(t, Config{DB: filepath.Join(t.TempDir(), "busy.db"), Listen: listen, Accounts: testAccounts()})
	defer col.Close()
	dev := device(t, "tcp://"+listen, "lab", "pi-1", "one")
	defer dev.Close()
	var mu sync.Mutex
	var got []string
	if err := dev.SubscribeCommands(func(_ context.Context, cmd *wire.Command) {
		mu.Lock()
		got = append(got, cmd.ID)
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	received := func(id string) bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Contains(got, id)
	}
	busyWith := func() string {
		ds, err := col.Store().Devices(ctx)
		if err != nil || len(ds) != 1 {
			t.Fatalf("devices: %v %v", ds, err)
		}
		return ds[0].BusyCommand
	}
	testenv.Until(t, "pi-1 online", func() bool {
		ds, _ := col.Store().Devices(ctx)
		return len(ds) == 1 && ds[0].Online
	})
	var seq uint32
	event := func(id string, st wire.EventState, at time.Time) {
		t.Helper()
		seq++
		if err := dev.PublishEvent(ctx, &wire.Event{V: wire.SchemaVersion, CommandID: id, Seq: seq, State: st, At: at.UTC()}); err != nil {
			t.Fatal(err)
		}
		testenv.Until(t, "the "+string(st)+" event stored", func() bool {
			evs, _ := col.Store().Events(ctx, id)
			return len(evs) > 0 && evs[len(evs)-1].State == st
		})
	}
	heartbeat := func(id string, at time.Time) {
		t.Helper()
		if err := dev.PublishHeartbeat(ctx, &wire.Heartbeat{V: wire.SchemaVersion, At: at.UTC(), Busy: id != "", CommandID: id}); err != nil {
			t.Fatal(err)
		}
		testenv.Until(t, "the heartbeat written", func() bool {
			ds, _ := col.Store().Devices(ctx)
			return len(ds) == 1 && ds[0].Heartbeat != nil && ds[0].Heartbeat.At.Equal(at.UTC())
		})
	}

	// The run: a command the collector sent, accepted and running, and a
	// heartbeat during it.
	tr, err := col.Trigger(ctx, scheduledb.TriggerRequest{Fleet: "lab", Device: "pi-1",
		Spec: wire.LoadTestSpec{URL: "http://127.0.0.1/", Connections: 1, DurationMS: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	run := tr.CommandID
	testenv.Until(t, "the command at pi-1", func() bool { return received(run) })
	t0 := time.Now()
	event(run, wire.StateAccepted, t0)
	event(run, wire.StateRunning, t0.Add(time.Millisecond))
	heartbeat(run, t0.Add(2*time.Millisecond))
	if b := busyWith(); b != run {
		t.Fatalf("pi-1 busy with %q during its run, want %s", b, run)
	}

	sch := storetest.Schedule("after")
	sch.Every, sch.Trigger.Device = time.Hour, "pi-1"
	start := time.Now()
	if err := col.Store().AddSchedule(ctx, sch, start); err != nil {
		t.Fatal(err)
	}
	firing := func(n int) scheduledb.ScheduleRun { return fireNth(ctx, t, col, "after", start, n) }
	// A firing while the command runs: missed, busy with it.
	if r := firing(1); len(r.Commands) != 0 || !slices.Equal(r.Missed, []scheduledb.Missed{{Device: "lab/pi-1", Reason: "busy with command " + run}}) {
		t.Errorf("firing during the run: commands %v missed %v, want missed busy with %s", r.Commands, r.Missed, run)
	}

	// The run ends; the heartbeat the device sent just before reaches the
	// store after its end.
	end := t0.Add(time.Second)
	event(run, wire.StateSucceeded, end)
	if b := busyWith(); b != "" {
		t.Errorf("pi-1 busy with %q after its command's succeeded event", b)
	}
	heartbeat(run, end.Add(-time.Millisecond))
	if b := busyWith(); b != "" {
		t.Errorf("pi-1 busy with %q after a heartbeat sent before its command's end", b)
	}
	r := firing(2)
	if len(r.Missed) != 0 || len(r.Commands) != 1 {
		t.Fatalf("firing just after the run: commands %v missed %v, want one sent, none missed", r.Commands, r.Missed)
	}
	next := r.Commands[0]
	testenv.Until(t, "the firing's command at pi-1", func() bool { return received(next) })

	// The firing's own command runs, with no end yet: busy with it.
	event(next, wire.StateAccepted, end.Add(time.Second))
	heartbeat(next, end.Add(2*time.Second))
	if r := firing(3); len(r.Commands) != 0 || !slices.Equal(r.Missed, []scheduledb.Missed{{Device: "lab/pi-1", Reason: "busy with command " + next}}) {
		t.Errorf("firing during the next run: commands %v missed %v, want missed busy with %s", r.Commands, r.Missed, next)
	}
}

// fireNth fires schedule name's n-th hourly firing after start (its
// first is due an hour after start) and returns its record, once the
// firing has sent its commands, recorded its misses or failed.
func fireNth(ctx context.Context, t *testing.T, col *Collector, name string, start time.Time, n int) scheduledb.ScheduleRun {
	t.Helper()
	col.sched.FireDue(ctx, start.Add(time.Duration(n)*time.Hour+time.Second))
	var r scheduledb.ScheduleRun
	testenv.Until(t, "the firing recorded", func() bool {
		runs, _ := col.Store().ScheduleRuns(ctx, name, 0)
		if len(runs) == n && (len(runs[0].Commands)+len(runs[0].Missed) > 0 || runs[0].Error != "") {
			r = runs[0]
			return true
		}
		return false
	})
	return r
}
