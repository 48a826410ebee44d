package store_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/wire"
)

// TestPendingCommands: on both engines, a load test, capacity search or
// watch sent to a device by name and not yet ended by it keeps it busy
// from the moment it is sent, until its terminal event from that device
// or its expiry; an event of another state, or the end on another device
// or fleet, leaves it busy; a mark, a cancel, a command to a whole fleet
// or one sent before PendingWindow does not count; of two, the oldest is
// named.
func TestPendingCommands(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		now := time.Now().UTC().Truncate(time.Millisecond)
		ids := map[string]string{}
		send := func(name, fleet, target string, kind wire.CommandKind, issued, ttl time.Duration) {
			t.Helper()
			c := &wire.Command{V: wire.SchemaVersion, ID: wire.NewID(), Kind: kind, IssuedAt: now.Add(issued), ExpiresAt: now.Add(issued + ttl)}
			if err := s.AddCommand(ctx, fleet, target, c, []byte{0x80}); err != nil {
				t.Fatal(err)
			}
			ids[name] = c.ID
		}
		event := func(name, fleet, device string, seq uint32, st wire.EventState) {
			t.Helper()
			if err := s.AddEvent(ctx, fleet, device, &wire.Event{V: wire.SchemaVersion, CommandID: ids[name], Seq: seq, State: st, At: now}); err != nil {
				t.Fatal(err)
			}
		}
		send("load", "lab", "pi-1", wire.KindLoadTest, -time.Second, time.Minute)
		send("capacity", "lab", "pi-2", wire.KindCapacity, -time.Second, time.Minute)
		send("watch", "lab", "pi-3", wire.KindProbe, -time.Second, time.Minute)
		send("running", "lab", "pi-4", wire.KindLoadTest, -time.Second, time.Minute)
		send("older", "lab", "pi-5", wire.KindLoadTest, -2*time.Second, time.Minute)
		send("newer", "lab", "pi-5", wire.KindLoadTest, -time.Second, time.Minute)
		for _, st := range []wire.EventState{wire.StateRejected, wire.StateSucceeded, wire.StateFailed, wire.StateCancelled, wire.StateTimedOut} {
			name := "ended " + string(st)
			send(name, "lab", "pi-"+string(st), wire.KindLoadTest, -time.Second, time.Minute)
			event(name, "lab", "pi-"+string(st), 1, wire.StateAccepted)
			event(name, "lab", "pi-"+string(st), 2, st)
		}
		send("ended elsewhere", "lab", "pi-6", wire.KindLoadTest, -time.Second, time.Minute)
		event("ended elsewhere", "lab", "pi-7", 1, wire.StateSucceeded)
		event("ended elsewhere", "other", "pi-6", 1, wire.StateSucceeded)
		event("running", "lab", "pi-4", 1, wire.StateRunning)
		send("expired", "lab", "pi-8", wire.KindLoadTest, -time.Minute, 30*time.Second)
		send("mark", "lab", "pi-9", wire.KindMark, -time.Second, time.Minute)
		send("cancel", "lab", "pi-9", wire.KindCancel, -time.Second, time.Minute)
		send("fleet", "lab", wire.AllDevices, wire.KindLoadTest, -time.Second, time.Minute)
		send("long ago", "lab", "pi-10", wire.KindLoadTest, -store.PendingWindow-time.Minute, 2*store.PendingWindow)

		got, err := s.PendingCommands(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"lab/pi-1": ids["load"], "lab/pi-2": ids["capacity"], "lab/pi-3": ids["watch"], "lab/pi-4": ids["running"],
			"lab/pi-5": ids["older"], "lab/pi-6": ids["ended elsewhere"]}
		if !maps.Equal(got, want) {
			t.Errorf("pending %v\nwant    %v (ids %v)", got, want, ids)
		}
		// At the expiry of the load: no longer pending.
		if got, err := s.PendingCommands(ctx, now.Add(59*time.Second)); err != nil || got["lab/pi-1"] != "" {
			t.Errorf("at its expiry, pi-1 pending with %q (%v)", got["lab/pi-1"], err)
		}
	})
}
