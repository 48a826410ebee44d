package store_test

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/storetest"
)

// TestStoreOwnerOnly: the store, its -wal and -shm files are readable by
// their owner only: they hold what the devices sent and the commands.
func TestStoreOwnerOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Ingest(context.Background(), []store.Incoming{storetest.Incoming(t, storetest.FakeResult(rand.New(rand.NewPCG(1, 1)), "lab", "pi-1", nil, time.Now(), 1, 1))}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if m := fi.Mode().Perm(); m != 0o600 {
			t.Errorf("%s: mode %o, want 600", filepath.Base(f), m)
		}
	}
}
