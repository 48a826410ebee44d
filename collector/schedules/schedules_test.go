package schedules

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/edgebench/edgebench/collector/group"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/scheduledb"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/wire"
)

// online stores n devices of fleet lab, online, as their birth says.
func online(t *testing.T, s *store.Store, n int) {
	t.Helper()
	for i := range n {
		st := &wire.Status{V: wire.SchemaVersion, State: wire.StatusOnline, BootID: "b", ConnSeq: 1, At: time.Now().UTC(),
			Info: &wire.DeviceInfo{Board: "Raspberry Pi 4"}}
		if _, err := s.SetStatus(context.Background(), "lab", fmt.Sprintf("pi-%03d", i), st); err != nil {
			t.Fatal(err)
		}
	}
}

// triggers records the triggers a scheduler sends.
type triggers struct {
	mu    sync.Mutex
	reqs  []scheduledb.TriggerRequest
	at    []time.Time
	peak  int           // goroutines of the process at a trigger, at most
	delay time.Duration // each trigger takes this long
}

func (tr *triggers) trigger(_ context.Context, req scheduledb.TriggerRequest) (string, []string, error) {
	time.Sleep(tr.delay)
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.reqs = append(tr.reqs, req)
	tr.at = append(tr.at, time.Now())
	tr.peak = max(tr.peak, runtime.NumGoroutine())
	return wire.NewID(), []string{req.Fleet + "/" + req.Device}, nil
}

func (tr *triggers) count() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return len(tr.reqs)
}

// TestJitteredFiringIsOneGoroutine: a firing with a jitter sends each of
// 300 online devices its own command, each at its moment of the window,
// in order, from the firing's one goroutine: the process's goroutines do
// not grow with the devices.
func TestJitteredFiringIsOneGoroutine(t *testing.T) {
	ctx := context.Background()
	s := storetest.OpenSQLite(t)
	const n = 300
	online(t, s, n)
	sch := storetest.Schedule("spread")
	sch.Every, sch.Jitter = time.Hour, 1500*time.Millisecond
	start := time.Now()
	if err := s.AddSchedule(ctx, sch, start.Add(-time.Hour)); err != nil { // due now
		t.Fatal(err)
	}
	tr := &triggers{}
	sc := New(Config{Store: s, Trigger: tr.trigger, Name: "test", Log: zaptest.NewLogger(t)})
	base := runtime.NumGoroutine()
	sc.FireDue(ctx, time.Now())
	sc.wg.Wait()
	runs, err := s.ScheduleRuns(ctx, "spread", 0)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %+v %v", runs, err)
	}
	r := runs[0]
	if tr.count() != n || len(r.Commands) != n || len(r.Devices) != n || len(r.Missed) != 0 {
		t.Fatalf("%d triggers, run with %d commands, %d devices, missed %v; want %d each", tr.count(), len(r.Commands), len(r.Devices), r.Missed, n)
	}
	seen := map[string]bool{}
	for i, req := range tr.reqs {
		if req.Fleet != "lab" || req.Device == "" || req.Select != nil || seen[req.Device] {
			t.Fatalf("trigger %d: %+v (a device by name, each once)", i, req)
		}
		seen[req.Device] = true
		if !slices.Contains(req.Spec.Labels, wire.Label{K: group.ScheduleLabel, V: "spread"}) {
			t.Errorf("trigger %d lacks the schedule's label: %v", i, req.Spec.Labels)
		}
	}
	if !slices.IsSortedFunc(tr.at, func(a, b time.Time) int { return a.Compare(b) }) {
		t.Error("the triggers were not sent in the order of their moments")
	}
	if d := tr.at[n-1].Sub(start); d > sch.Jitter+time.Second {
		t.Errorf("the last trigger %v after the firing, want within the jitter %v", d, sch.Jitter)
	}
	if first, last := tr.at[0].Sub(start), tr.at[n-1].Sub(start); last-first < sch.Jitter/2 {
		t.Errorf("the triggers spread over %v of a %v jitter", last-first, sch.Jitter)
	}
	if tr.peak > base+10 {
		t.Errorf("%d goroutines during the firing of %d devices, %d before: a goroutine per device", tr.peak, n, base)
	}
}

// TestFiringsBounded: with MaxFirings firings under way, a schedule that
// falls due meanwhile is left due, not claimed, and fired at a later
// call once one has ended.
func TestFiringsBounded(t *testing.T) {
	ctx := context.Background()
	s := storetest.OpenSQLite(t)
	online(t, s, 2)
	now := time.Now()
	for _, name := range []string{"a", "b", "c"} {
		sch := storetest.Schedule(name)
		sch.Every, sch.Jitter = time.Hour, 10*time.Millisecond
		if err := s.AddSchedule(ctx, sch, now.Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	tr := &triggers{delay: 500 * time.Millisecond}
	sc := New(Config{Store: s, Trigger: tr.trigger, Name: "test", MaxFirings: 2, Log: zaptest.NewLogger(t)})
	sc.FireDue(ctx, time.Now())
	due, err := s.DueSchedules(ctx, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(due) != 1 {
		t.Errorf("%d schedules left due with 2 firings under way at most, want 1", len(due))
	}
	sc.wg.Wait()
	sc.FireDue(ctx, time.Now())
	sc.wg.Wait()
	for _, name := range []string{"a", "b", "c"} {
		if runs, err := s.ScheduleRuns(ctx, name, 0); err != nil || len(runs) != 1 || len(runs[0].Commands) != 2 {
			t.Errorf("%s: runs %+v %v, want one firing of two commands", name, runs, err)
		}
	}
}
