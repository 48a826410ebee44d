package agent

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgebench/edgebench/wire"
)

// eventLog is a Link that keeps the events the agent publishes.
type eventLog struct {
	mu     sync.Mutex
	events []*wire.Event
}

func (l *eventLog) PublishEvent(_ context.Context, ev *wire.Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, ev)
	return nil
}

func (l *eventLog) PublishResult(context.Context, *wire.Result) error       { return nil }
func (l *eventLog) PublishHeartbeat(context.Context, *wire.Heartbeat) error { return nil }

func (l *eventLog) last(cmdID string) *wire.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.events) - 1; i >= 0; i-- {
		if l.events[i].CommandID == cmdID {
			return l.events[i]
		}
	}
	return nil
}

func newTestAgent(t *testing.T) (*Agent, *eventLog) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.DeviceID, cfg.StateDir = "pi1", t.TempDir()
	a, err := New(cfg, Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	l := &eventLog{}
	a.SetLink(l, nil)
	return a, l
}

// wrapMS is a count of milliseconds that wraps around to 448,384 ns when
// multiplied by time.Millisecond in 64 bits: a positive duration well
// under every cap.
const wrapMS = 18446744073710

// TestCommandsWithUnschedulableFiguresAreRejected: a rate whose interval
// overflows and milliseconds a Duration cannot hold are rejected by the
// agent, with the same reason on every architecture (this test runs in the
// 32-bit pass too), instead of wrapping around to a run at full speed or a
// 0.4 ms serve and probe interval.
func TestCommandsWithUnschedulableFiguresAreRejected(t *testing.T) {
	a, log := newTestAgent(t)
	now := time.Now().UTC()
	cmd := func(kind wire.CommandKind, spec wire.CommandSpec) *wire.Command {
		return &wire.Command{V: wire.SchemaVersion, ID: wire.NewID(), IssuedAt: now, ExpiresAt: now.Add(time.Minute), Kind: kind, Spec: spec}
	}
	lt := func(f func(*wire.LoadTestSpec)) *wire.Command {
		s := &wire.LoadTestSpec{URL: "http://127.0.0.1:1/", Connections: 1, DurationMS: 1000}
		f(s)
		return cmd(wire.KindLoadTest, wire.CommandSpec{LoadTest: s})
	}
	for _, c := range []struct {
		cmd  *wire.Command
		want string
	}{
		{lt(func(s *wire.LoadTestSpec) { s.Rate = 1e-300 }), "rate 1e-300"},
		{lt(func(s *wire.LoadTestSpec) { s.Rate = 5e-324 }), "rate 5e-324"},
		{lt(func(s *wire.LoadTestSpec) { s.Rate = math.NaN() }), "rate NaN"},
		{lt(func(s *wire.LoadTestSpec) { s.Rate = math.Inf(1) }), "rate +Inf"},
		{lt(func(s *wire.LoadTestSpec) { s.DurationMS = wrapMS }), "duration 18446744073710 ms"},
		{lt(func(s *wire.LoadTestSpec) { s.DurationMS = math.MaxInt64 }), "duration 9223372036854775807 ms"},
		{lt(func(s *wire.LoadTestSpec) { s.TimeoutMS = wrapMS }), "timeout 18446744073710 ms"},
		{lt(func(s *wire.LoadTestSpec) { s.WarmupMS = wrapMS }), "warmup 18446744073710 ms"},
		{cmd(wire.KindProbe, wire.CommandSpec{Probe: &wire.ProbeSpec{DurationMS: wrapMS}}), "duration 18446744073710 ms"},
		{cmd(wire.KindProbe, wire.CommandSpec{Probe: &wire.ProbeSpec{DurationMS: 1000, IntervalMS: wrapMS}}), "interval 18446744073710 ms"},
		{cmd(wire.KindProbe, wire.CommandSpec{Probe: &wire.ProbeSpec{DurationMS: 1000, IntervalMS: 5000}}), "interval 5s over the duration 1s"},
		{cmd(wire.KindServe, wire.CommandSpec{Serve: &wire.ServeSpec{Addr: "127.0.0.1:0", DurationMS: wrapMS}}), "serve duration 18446744073710 ms"},
	} {
		a.command(context.Background(), incoming{cmd: c.cmd})
		ev := log.last(c.cmd.ID)
		if ev == nil || ev.State != wire.StateRejected || !strings.Contains(ev.Reason, c.want) {
			t.Errorf("%s: got %+v, want rejected for %q", c.want, ev, c.want)
		}
		a.stopServing()
	}
	// In range, the same figures are accepted.
	ok := lt(func(s *wire.LoadTestSpec) { s.Rate = 0.5 })
	a.command(context.Background(), incoming{cmd: ok})
	if ev := log.last(ok.ID); ev == nil || ev.State != wire.StateAccepted {
		t.Errorf("rate 0.5: %+v", ev)
	}
}
