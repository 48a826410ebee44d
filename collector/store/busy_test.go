package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/wire"
)

// TestBusyEndsWithTheTerminalEvent: on both engines, a device is busy with
// the command its latest heartbeat names until that command's terminal
// event from it is stored, whichever arrives first; an event of another
// state, of another command or from another device leaves it busy.
func TestBusyEndsWithTheTerminalEvent(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		at := time.Date(2026, 12, 5, 22, 34, 0, 0, time.UTC)
		const cmd = "01JB6Z3H00A1B2C3D4E5F6G7H8"
		states := []wire.EventState{wire.StateAccepted, wire.StateRunning, wire.StateRejected, wire.StateSucceeded,
			wire.StateFailed, wire.StateCancelled, wire.StateTimedOut}
		for i, st := range states {
			dev := "pi-" + string(rune('a'+i))
			at = at.Add(time.Second)
			if err := s.SetHeartbeats(ctx, map[wire.Addr]*wire.Heartbeat{{Fleet: "lab", Device: dev}: {V: wire.SchemaVersion, At: at, Busy: true, CommandID: cmd}}); err != nil {
				t.Fatal(err)
			}
			// The command's end on the other fleet's device of that name
			// and on another device of the fleet, and another command's
			// end on this device: none ends it.
			for _, other := range []struct{ fleet, dev, cmd string }{{"other", dev, cmd}, {"lab", "pi-z", cmd}, {"lab", dev, "01JB6Z3H00A1B2C3D4E5F6G7H9"}} {
				if err := s.AddEvent(ctx, other.fleet, other.dev, &wire.Event{V: wire.SchemaVersion, CommandID: other.cmd, Seq: 9, State: wire.StateSucceeded, At: at}); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.AddEvent(ctx, "lab", dev, &wire.Event{V: wire.SchemaVersion, CommandID: cmd, Seq: 1, State: st, At: at}); err != nil {
				t.Fatal(err)
			}
			// A heartbeat sent before the end, written after it.
			if err := s.SetHeartbeats(ctx, map[wire.Addr]*wire.Heartbeat{{Fleet: "lab", Device: dev}: {V: wire.SchemaVersion, At: at.Add(time.Millisecond), Busy: true, CommandID: cmd}}); err != nil {
				t.Fatal(err)
			}
		}
		ds, err := s.Devices(ctx)
		if err != nil {
			t.Fatal(err)
		}
		busy := map[string]string{}
		for _, d := range ds {
			if d.Fleet == "lab" {
				busy[d.ID] = d.BusyCommand
			}
		}
		for i, st := range states {
			dev := "pi-" + string(rune('a'+i))
			want := cmd
			if st.Terminal() {
				want = ""
			}
			if busy[dev] != want {
				t.Errorf("%s after a %s event: busy with %q, want %q", dev, st, busy[dev], want)
			}
		}
	})
}
