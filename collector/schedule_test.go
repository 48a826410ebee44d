package collector

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/group"
	"github.com/edgebench/edgebench/collector/store/scheduledb"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/wire"
)

// TestScheduleFiresOnceWithTwoCollectors: two collectors on one
// PostgreSQL and one broker both run the scheduler; each firing of a
// schedule reaches the devices once, labelled with the schedule's name,
// and a device offline at a firing is recorded as missed.
func TestScheduleFiresOnceWithTwoCollectors(t *testing.T) {
	broker := testenv.Mosquitto(t)
	db := testenv.PostgresDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var cols []*Collector
	for i := range 2 {
		c := startCollector(t, Config{DB: db, Broker: broker, Share: "ingest", ClientID: fmt.Sprintf("sched-%d", i),
			Schedules: scheduledb.ScheduleLimits{MinEvery: time.Second}})
		defer c.Close()
		cols = append(cols, c)
	}
	// pi-3 says hello and leaves: known, offline.
	gone := device(t, broker, "lab", "pi-3", "")
	var mu sync.Mutex
	got := map[string][]*wire.Command{}
	for _, id := range []string{"pi-1", "pi-2"} {
		d := device(t, broker, "lab", id, "")
		defer d.Close()
		if err := d.SubscribeCommands(func(_ context.Context, cmd *wire.Command) {
			mu.Lock()
			got[id] = append(got[id], cmd)
			mu.Unlock()
		}); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Until(t, "three devices known, two online", func() bool {
		ds, _ := cols[0].Store().Devices(ctx)
		on := 0
		for _, d := range ds {
			if d.Online {
				on++
			}
		}
		return len(ds) == 3 && on == 3
	})
	gone.Close()
	testenv.Until(t, "pi-3 offline", func() bool {
		ds, _ := cols[1].Store().Devices(ctx)
		for _, d := range ds {
			if d.ID == "pi-3" {
				return !d.Online
			}
		}
		return false
	})

	// Added through the first collector's API; both collectors see it due.
	body, _ := json.Marshal(storetest.Schedule("often"))
	resp, err := http.Post("http://"+cols[0].WebAddr()+"/api/schedules", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("add: %s %s", resp.Status, b)
	}
	var runs []scheduledb.ScheduleRun
	testenv.Until(t, "five firings", func() bool {
		runs, err = cols[1].Store().ScheduleRuns(ctx, "often", 0)
		n := 0
		for _, r := range runs {
			if len(r.Commands) > 0 {
				n++
			}
		}
		return err == nil && n >= 5
	})
	if err := cols[1].Store().PauseSchedule(ctx, "often", true, time.Now()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // a firing claimed before the pause finishes
	runs, err = cols[1].Store().ScheduleRuns(ctx, "often", 0)
	if err != nil {
		t.Fatal(err)
	}
	fired := map[string]bool{}
	by := map[string]int{}
	for _, r := range runs {
		if len(r.Commands) != 1 {
			continue
		}
		fired[r.Commands[0]] = true
		by[strings.Split(r.Collector, "@")[0]]++
		if !slices.Contains(r.Missed, scheduledb.Missed{Device: "lab/pi-3", Reason: "offline"}) {
			t.Errorf("run at %s: missed %v, want lab/pi-3 offline", r.DueAt, r.Missed)
		}
	}
	t.Logf("%d firings, by collector %v", len(fired), by)

	// Both collectors find "race" due at the same moment, five times over:
	// each firing is claimed by one.
	race := storetest.Schedule("race")
	race.Every = time.Hour
	start := time.Now()
	if err := cols[0].Store().AddSchedule(ctx, race, start); err != nil {
		t.Fatal(err)
	}
	for round := range 5 {
		at := start.Add(time.Duration(round+1)*time.Hour + time.Second)
		var wg sync.WaitGroup
		for _, c := range cols {
			wg.Add(1)
			go func() { defer wg.Done(); c.sched.FireDue(ctx, at) }()
		}
		wg.Wait()
	}
	testenv.Until(t, "five race firings recorded", func() bool {
		rr, err := cols[0].Store().ScheduleRuns(ctx, "race", 0)
		if err != nil || len(rr) != 5 {
			return false
		}
		for _, r := range rr {
			if len(r.Commands) != 1 {
				return false
			}
			fired[r.Commands[0]] = true
		}
		return true
	})
	const total = 10 // firings: five of often (more may follow its pause), five of race
	testenv.Until(t, "every firing's command at both devices", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got["pi-1"]) >= len(fired) && len(got["pi-2"]) >= len(fired)
	})
	time.Sleep(time.Second)
	mu.Lock()
	defer mu.Unlock()
	for id, cmds := range got {
		seen := map[string]bool{}
		for _, c := range cmds {
			if !fired[c.ID] || seen[c.ID] {
				t.Errorf("%s got command %s: not one of the recorded firings, or twice", id, c.ID)
			}
			seen[c.ID] = true
			if !slices.Contains(c.Spec.LoadTest.Labels, wire.Label{K: group.ScheduleLabel, V: "often"}) &&
				!slices.Contains(c.Spec.LoadTest.Labels, wire.Label{K: group.ScheduleLabel, V: "race"}) {
				t.Errorf("%s: command labels %v lack the schedule's", id, c.Spec.LoadTest.Labels)
			}
		}
		if len(fired) < total || len(cmds) != len(fired) {
			t.Errorf("%s got %d commands for %d firings", id, len(cmds), len(fired))
		}
	}
}

// TestScheduleSurvivesRestart: a collector closed for several periods
// fires the schedule again when it starts, once, and records the firings
// it missed meanwhile.
func TestScheduleSurvivesRestart(t *testing.T) {
	db := filepath.Join(t.TempDir(), "edgebench.db")
	ctx := context.Background()
	cfg := func() Config { return Config{DB: db, Listen: testenv.FreeAddr(t), Accounts: testAccounts()} }
	c := startCollector(t, cfg())
	// A fleet with a device known (offline): its firings go to the fleet.
	if _, err := c.Store().SetStatus(ctx, "lab", "pi-1", &wire.Status{V: wire.SchemaVersion, State: wire.StatusOffline, BootID: "b1", ConnSeq: 1, At: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	sch := storetest.Schedule("often")
	sch.Every = 2 * time.Second
	if err := c.Store().AddSchedule(ctx, sch, time.Now()); err != nil {
		t.Fatal(err)
	}
	testenv.Until(t, "a firing", func() bool {
		runs, _ := c.Store().ScheduleRuns(ctx, "often", 0)
		return len(runs) == 1 && len(runs[0].Commands) == 1
	})
	c.Close()
	time.Sleep(7 * time.Second)
	c = startCollector(t, cfg())
	defer c.Close()
	var runs []scheduledb.ScheduleRun
	testenv.Until(t, "a firing after the restart", func() bool {
		runs, _ = c.Store().ScheduleRuns(ctx, "often", 0)
		return len(runs) > 0 && len(runs[0].Commands) == 1 && runs[0].DueAt.After(time.Now().Add(-3*time.Second))
	})
	missed := 0
	for _, r := range runs {
		if strings.Contains(r.Error, "no collector was running") {
			missed++
		}
	}
	if missed < 2 {
		t.Errorf("%d firings recorded as missed while the collector was down, want 2 or more: %+v", missed, runs)
	}
}

// TestScheduleJitter: with --jitter a fleet's firing sends each online
// device its own command, each within the jitter window after the due
// time, labelled with the schedule.
func TestScheduleJitter(t *testing.T) {
	ctx := context.Background()
	listen := testenv.FreeAddr(t)
	col := startCollector(t, Config{DB: filepath.Join(t.TempDir(), "j.db"), Listen: listen, Accounts: testAccounts()})
	defer col.Close()
	type got struct {
		id string
		at time.Time
	}
	var mu sync.Mutex
	recv := map[string][]got{}
	for _, d := range []struct{ id, pw string }{{"pi-1", "one"}, {"pi-2", "two"}} {
		c := device(t, "tcp://"+listen, "lab", d.id, d.pw)
		defer c.Close()
		if err := c.SubscribeCommands(func(_ context.Context, cmd *wire.Command) {
			mu.Lock()
			recv[d.id] = append(recv[d.id], got{cmd.ID, time.Now()})
			mu.Unlock()
		}); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Until(t, "both devices online", func() bool {
		ds, _ := col.Store().Devices(ctx)
		return len(ds) == 2 && ds[0].Online && ds[1].Online
	})
	sch := storetest.Schedule("spread")
	sch.Every, sch.Jitter = time.Hour, 3*time.Second
	if err := col.Store().AddSchedule(ctx, sch, time.Now().Add(-time.Hour)); err != nil { // due now
		t.Fatal(err)
	}
	var run scheduledb.ScheduleRun
	testenv.Until(t, "the firing recorded", func() bool {
		runs, _ := col.Store().ScheduleRuns(ctx, "spread", 0)
		if len(runs) == 1 && len(runs[0].Commands) == 2 {
			run = runs[0]
			return true
		}
		return false
	})
	mu.Lock()
	defer mu.Unlock()
	if len(recv["pi-1"]) != 1 || len(recv["pi-2"]) != 1 || recv["pi-1"][0].id == recv["pi-2"][0].id {
		t.Fatalf("commands received %+v, want one each, distinct", recv)
	}
	for id, g := range recv {
		if d := g[0].at.Sub(run.FiredAt); d < 0 || d > sch.Jitter+time.Second {
			t.Errorf("%s got its command %v after the firing, want within the jitter %v", id, d, sch.Jitter)
		}
	}
	if !slices.Equal(run.Devices, []string{"lab/pi-1", "lab/pi-2"}) || len(run.Missed) != 0 {
		t.Errorf("run %+v", run)
	}
	t.Logf("pi-1 at +%v, pi-2 at +%v", recv["pi-1"][0].at.Sub(run.FiredAt).Round(time.Millisecond), recv["pi-2"][0].at.Sub(run.FiredAt).Round(time.Millisecond))
}
