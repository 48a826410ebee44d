package collector

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/internal/testenv"
)

// TestCollectorKeep: a collector with Keep prunes what is older when it
// starts.
func TestCollectorKeep(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "k.db")
	s, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	old := storetest.FakeResult(rng, "lab", "pi-1", nil, time.Now().Add(-48*time.Hour), 1000, 800)
	fresh := storetest.FakeResult(rng, "lab", "pi-1", nil, time.Now(), 1000, 800)
	oldIn := storetest.Incoming(t, old)
	oldIn.Received = old.CreatedAt
	if _, err := s.Ingest(ctx, []store.Incoming{oldIn, storetest.Incoming(t, fresh)}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	col := startCollector(t, Config{DB: db, Listen: testenv.FreeAddr(t), Accounts: testAccounts(), Web: "-", Keep: 24 * time.Hour})
	defer col.Close()
	testenv.Until(t, "the old result pruned", func() bool {
		n, _, err := col.Store().CountResults(ctx)
		return err == nil && n == 1
	})
	if _, err := col.Store().Result(ctx, fresh.ID); err != nil {
		t.Errorf("the recent result: %v", err)
	}
}
