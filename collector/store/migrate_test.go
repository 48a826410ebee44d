package store_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/wire"
)

// TestOpenStoreConcurrently: the collector and a reading command opening
// a new store at once both bring it up to date, once.
func TestOpenStoreConcurrently(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		path := e.DB(t)
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := store.Open(context.Background(), path)
				if err == nil {
					s.Close()
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
	})
}

// TestMigrateFromVersion2: a SQLite file written by the collector before
// the migrations were files (schema version 2: a device, a result, a
// command and its event) opens, migrates forward once and keeps all it
// held; the heartbeat it had is replaced by a newer one only.
func TestMigrateFromVersion2(t *testing.T) {
	ctx := context.Background()
	old, err := os.ReadFile("testdata/store-v2.db")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "v2.db")
	if err := os.WriteFile(path, old, 0o600); err != nil {
		t.Fatal(err)
	}
	ms, err := store.MigrationNames("sqlite")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second open finds nothing to do
		s, err := store.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		var v int
		if err := s.W().QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil || v != len(ms) || v < 3 {
			t.Fatalf("schema version %d (%v), want %d", v, err, len(ms))
		}
		devs, err := s.Devices(ctx)
		if err != nil || len(devs) != 1 {
			t.Fatalf("devices %+v %v", devs, err)
		}
		d := devs[0]
		if d.Info == nil || d.Info.Board != "Raspberry Pi 4" || d.Labels["site"] != "attic" || d.ConnSeq != 7 || !d.Online ||
			d.Heartbeat == nil || d.LastResult != "01JNBM0000000000000000V2R1" {
			t.Errorf("device %+v", d)
		}
		runs, err := s.Runs(ctx, store.Filter{Labels: map[string]string{"server": "nginx"}})
		if err != nil || len(runs) != 1 || runs[0].Spec.URL == "" {
			t.Errorf("runs %+v %v", runs, err)
		}
		evs, err := s.Events(ctx, "01JNBM0000000000000000V2C1")
		if err != nil || len(evs) != 1 || evs[0].ResultID != "01JNBM0000000000000000V2R1" {
			t.Errorf("events %+v %v", evs, err)
		}
		s.Close()
	}
	s, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a := wire.Addr{Fleet: "lab", Device: "pi-1"}
	for _, hb := range []*wire.Heartbeat{
		{V: 1, At: time.Date(2025, 3, 1, 12, 1, 0, 0, time.UTC), UptimeS: 65},
		{V: 1, At: time.Date(2025, 3, 1, 12, 0, 30, 0, time.UTC), UptimeS: 35},
	} {
		if err := s.SetHeartbeats(ctx, map[wire.Addr]*wire.Heartbeat{a: hb}); err != nil {
			t.Fatal(err)
		}
	}
	if devs, err := s.Devices(ctx); err != nil || devs[0].Heartbeat.UptimeS != 65 {
		t.Errorf("heartbeat after the migration: %+v %v", devs[0].Heartbeat, err)
	}
}
