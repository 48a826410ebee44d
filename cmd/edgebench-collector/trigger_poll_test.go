package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector"
	"github.com/edgebench/edgebench/collector/compare"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/wire"
)

// TestTriggerWaitLinesAreEachDevicesOwn follows a command on two devices
// whose events interleave: the first poll holds pi-b's progress ("run 3
// of 6") at the place the second poll holds pi-a's terminal event, which
// has no progress and no reason. Each line must carry its own device's
// figures: a poll decoded into the previous poll's value keeps pi-b's
// fields on pi-a's "succeeded" line.
func TestTriggerWaitLinesAreEachDevicesOwn(t *testing.T) {
	at := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	ev := func(dev string, seq uint32, st wire.EventState, reason, rid string, p *wire.Progress) store.Event {
		return store.Event{CommandID: "C1", Fleet: "demo", Device: dev, Seq: seq, State: st, Reason: reason, ResultID: rid, Progress: p, At: at}
	}
	polls := []collector.CommandStatus{
		{Events: []store.Event{
			ev("pi-b", 3, wire.StateRunning, "run 3 of 6", "", &wire.Progress{ElapsedMS: 1000, Completed: 5997, RPS: 5993.2}),
			ev("pi-a", 5, wire.StateRunning, "run 6 of 6", "", &wire.Progress{ElapsedMS: 1000, Completed: 6053, RPS: 6051}),
		}},
		{Events: []store.Event{
			ev("pi-a", 7, wire.StateSucceeded, "", "RA", nil),
			ev("pi-b", 8, wire.StateSucceeded, "", "RB", nil),
		}, Results: []compare.ExportRow{
			{RunRow: store.RunRow{ID: "RA", Fleet: "demo", Device: "pi-a"}},
			{RunRow: store.RunRow{ID: "RB", Fleet: "demo", Device: "pi-b"}},
		}},
	}
	var n atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/trigger", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(collector.Triggered{CommandID: "C1", Devices: []string{"demo/pi-a", "demo/pi-b"}, Topics: []string{"edgebench/demo/_all/cmd"}})
	})
	mux.HandleFunc("GET /api/commands/C1", func(w http.ResponseWriter, r *http.Request) {
		i := min(int(n.Add(1))-1, len(polls)-1)
		json.NewEncoder(w).Encode(polls[i])
	})
	mux.HandleFunc("GET /api/compare", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("compare\n")) })
	srv := httptest.NewServer(mux)
	defer srv.Close()

	var out bytes.Buffer
	tc := &triggerConfig{server: srv.URL, wait: true, maxWait: time.Minute}
	if err := runTrigger(context.Background(), &out, tc); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{
		"demo/pi-b: running 1.0s 5997 requests 5993.2 req/s (run 3 of 6)\n",
		"demo/pi-a: running 1.0s 6053 requests 6051.0 req/s (run 6 of 6)\n",
		"demo/pi-a: succeeded result RA\n",
		"demo/pi-b: succeeded result RB\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
}
