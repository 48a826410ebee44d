package collector

import (
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/wire"
)

// startObserved starts a collector whose log the test reads; it is
// closed when the test ends.
func startObserved(t *testing.T, cfg Config) (*Collector, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	cfg.Log = zap.New(core)
	c, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	return c, logs
}

// badDiskResult is a result whose summary names disk -1 of a one-disk
// table: what crashed the collector. It never gets past the decoder; here
// it stands for whatever else could make the store panic.
func badDiskResult(rng *rand.Rand) *wire.Result {
	r := storetest.FakeResult(rng, "lab", "pi-1", nil, time.Now(), 1000, 800)
	r.Runs[0].System = &wire.System{Disks: []string{"sda"}, Partitions: []bool{true},
		Summary: wire.SysSummary{Disks: []wire.DiskWindow{{I: -1}}}}
	return r
}

// TestIngestSurvivesAPanic: when the store panics on one result of a
// batch, the others of the batch are stored and acked, that one fails
// (not acked: its device keeps it), the panic is counted and logged, and
// the ingest goes on.
func TestIngestSurvivesAPanic(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	col, logs := startObserved(t, Config{DB: filepath.Join(t.TempDir(), "p.db"), Listen: testenv.FreeAddr(t), Accounts: testAccounts(), Web: "-"})
	rng := rand.New(rand.NewPCG(7, 8))
	var good []*wire.Result
	for range 20 {
		good = append(good, storetest.FakeResult(rng, "lab", "pi-1", nil, time.Now(), 1000, 800))
	}
	bad := badDiskResult(rng)
	all := append([]*wire.Result{bad}, good...)
	errs := make([]error, len(all))
	var wg sync.WaitGroup
	for i, r := range all {
		wg.Go(func() {
			b, _ := r.MarshalMsg(nil)
			errs[i] = col.onResult(ctx, wire.Addr{Fleet: "lab", Device: "pi-1"}, r, b)
		})
	}
	wg.Wait()
	var pe *panicError
	if !errors.As(errs[0], &pe) {
		t.Errorf("the result the store panicked on: %v", errs[0])
	}
	for i, err := range errs[1:] {
		if err != nil {
			t.Errorf("good result %d: %v", i, err)
		}
	}
	if n, _, _ := col.Store().CountResults(ctx); n != int64(len(good)) {
		t.Errorf("%d results stored, want %d", n, len(good))
	}
	if s := col.Stats(); s.Panics != 1 || s.Stored != int64(len(good)) || s.Failed != 1 {
		t.Errorf("stats %+v", s)
	}
	if l := logs.FilterMessage("result not stored: the store panicked on it").All(); len(l) != 1 || l[0].ContextMap()["result_id"] != bad.ID {
		t.Errorf("panic logged %d times: %v", len(l), l)
	}
	// And the next result goes through.
	next := storetest.FakeResult(rng, "lab", "pi-1", nil, time.Now(), 1000, 800)
	b, _ := next.MarshalMsg(nil)
	if err := col.onResult(ctx, wire.Addr{Fleet: "lab", Device: "pi-1"}, next, b); err != nil {
		t.Fatal(err)
	}
}

// TestIngestSurvivesAResultTheStoreRefuses: when the database refuses one
// result of a batch (here a trigger in the file), the others are stored
// and acked, and only that one fails (not acked: its device keeps it).
func TestIngestSurvivesAResultTheStoreRefuses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db := filepath.Join(t.TempDir(), "r.db")
	col, _ := startObserved(t, Config{DB: db, Listen: testenv.FreeAddr(t), Accounts: testAccounts(), Web: "-"})
	if _, err := sqliteDB(t, db).ExecContext(ctx, `CREATE TRIGGER refuse BEFORE INSERT ON results WHEN NEW.device = 'pi-2'
		BEGIN SELECT RAISE(ABORT, 'refused'); END`); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 9))
	bad := storetest.FakeResult(rng, "lab", "pi-2", nil, time.Now(), 1000, 800)
	all := []*wire.Result{bad}
	for range 20 {
		all = append(all, storetest.FakeResult(rng, "lab", "pi-1", nil, time.Now(), 1000, 800))
	}
	errs := make([]error, len(all))
	var wg sync.WaitGroup
	for i, r := range all {
		wg.Go(func() {
			b, _ := r.MarshalMsg(nil)
			errs[i] = col.onResult(ctx, wire.Addr{Fleet: r.Fleet, Device: r.Device}, r, b)
		})
	}
	wg.Wait()
	if errs[0] == nil || !strings.Contains(errs[0].Error(), "refused") {
		t.Errorf("the refused result: %v", errs[0])
	}
	for i, err := range errs[1:] {
		if err != nil {
			t.Errorf("good result %d: %v", i, err)
		}
	}
	if s := col.Stats(); s.Stored != 20 || s.Failed != 1 {
		t.Errorf("stats %+v", s)
	}
}
