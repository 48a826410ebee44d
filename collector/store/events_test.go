package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/scheduledb"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/wire"
)

// TestEventsOfOtherDevicesLeftOut, in both engines: events a device of
// another fleet (or of the same fleet, the command sent to another
// device) stored for a command, as an older collector took them, join
// none of the command's three readers: its status (Events, what trigger
// --wait prints and judges), the missed devices of the schedule's firing
// that sent it, and the devices a cancel goes to. A command sent to a
// selection is cancelled on each device of it while none has answered.
func TestEventsOfOtherDevicesLeftOut(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		now := time.Now().UTC()
		send := func(fleet, target string) string {
			t.Helper()
			cmd := &wire.Command{V: 1, ID: wire.NewID(), IssuedAt: now, ExpiresAt: now.Add(time.Minute), Kind: wire.KindLoadTest}
			if err := s.AddCommand(ctx, fleet, target, cmd, []byte{0x80}); err != nil {
				t.Fatal(err)
			}
			return cmd.ID
		}
		event := func(cmd, fleet, device string, seq uint32, st wire.EventState, reason string) {
			t.Helper()
			if err := s.AddEvent(ctx, fleet, device, &wire.Event{V: 1, CommandID: cmd, Seq: seq, State: st, Reason: reason, At: now}); err != nil {
				t.Fatal(err)
			}
		}
		toOther := send("other", wire.AllDevices)
		event(toOther, "other", "good", 1, wire.StateAccepted, "")
		event(toOther, "other", "good", 2, wire.StateRunning, "")
		event(toOther, "demo", "evil", 1, wire.StateRunning, "forged")
		event(toOther, "other", "good", 3, wire.StateRunning, "") // still running
		evs, err := s.Events(ctx, toOther)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 3 || slices.ContainsFunc(evs, func(e store.Event) bool { return e.Device != "good" }) {
			t.Errorf("the command's events: %+v, want good's 3", evs)
		}
		if ts, err := s.CancelTargets(ctx, toOther); err != nil || !slices.Equal(ts, []wire.Addr{{Fleet: "other", Device: "good"}}) {
			t.Errorf("a cancel goes to %v (%v), want other/good only", ts, err)
		}
		// A device of the same fleet, the command sent to another.
		toOne := send("other", "good")
		event(toOne, "other", "bad", 1, wire.StateRunning, "forged")
		if ts, err := s.CancelTargets(ctx, toOne); err != nil || !slices.Equal(ts, []wire.Addr{{Fleet: "other", Device: "good"}}) {
			t.Errorf("a cancel of a command no device answered goes to %v (%v), want where it was sent", ts, err)
		}
		// A selection (one id sent to each device): each gets the
		// cancel, not the first one only.
		sel := send("other", "good")
		if err := s.AddCommand(ctx, "other", "fine", &wire.Command{V: 1, ID: sel, IssuedAt: now, ExpiresAt: now.Add(time.Minute),
			Kind: wire.KindLoadTest}, []byte{0x80}); err != nil {
			t.Fatal(err)
		}
		if ts, err := s.CancelTargets(ctx, sel); err != nil || !slices.Equal(ts, []wire.Addr{{Fleet: "other", Device: "fine"}, {Fleet: "other", Device: "good"}}) {
			t.Errorf("a selection's cancel goes to %v (%v), want both its devices", ts, err)
		}
		// A firing that sent toOther: evil's rejection is not a missed device.
		event(toOther, "demo", "evil", 2, wire.StateRejected, "forged")
		sch := storetest.Schedule("nightly")
		sch.Trigger.Fleet = "other"
		if err := s.AddSchedule(ctx, sch, now); err != nil {
			t.Fatal(err)
		}
		due := now.Add(time.Second)
		if ok, err := s.ClaimRun(ctx, sch, due, due.Add(time.Second), nil, "c1", now); !ok || err != nil {
			t.Fatalf("claim: %v %v", ok, err)
		}
		if err := s.FinishRun(ctx, &scheduledb.ScheduleRun{Schedule: "nightly", DueAt: due, Commands: []string{toOther},
			Devices: []string{"other/good"}}); err != nil {
			t.Fatal(err)
		}
		event(toOther, "other", "good", 4, wire.StateSucceeded, "")
		runs, err := s.ScheduleRuns(ctx, "nightly", 0)
		if err != nil || len(runs) != 1 || len(runs[0].Missed) != 0 {
			t.Errorf("the firing's runs: %+v %v, want none missed", runs, err)
		}
	})
}
