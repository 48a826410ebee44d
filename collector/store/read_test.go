package store_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/group"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/wire"
)

// TestStoredBytesSince: the bytes of a device's day, as the quota reads
// them at start, in both engines: its own results received since then.
func TestStoredBytesSince(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		rng := rand.New(rand.NewPCG(6, 6))
		now := time.Now()
		var batch []store.Incoming
		var want int64
		for i, at := range []time.Duration{-48 * time.Hour, -2 * time.Hour, -time.Minute} {
			in := storetest.Incoming(t, storetest.FakeResult(rng, "lab", "pi-1", nil, now.Add(at), 1000, 800))
			in.Received = now.Add(at)
			if i > 0 {
				want += int64(len(in.Raw))
			}
			batch = append(batch, in, storetest.Incoming(t, storetest.FakeResult(rng, "lab", "pi-2", nil, now, 1, 1)))
		}
		if _, err := s.Ingest(ctx, batch); err != nil {
			t.Fatal(err)
		}
		got, err := s.StoredBytesSince(ctx, wire.Addr{Fleet: "lab", Device: "pi-1"}, now.Add(-24*time.Hour))
		if err != nil || got != want {
			t.Errorf("%d bytes (%v), want %d", got, err, want)
		}
	})
}

// TestGroupColumnsAreTheSystemFields: the store has a column for each
// system-info field a comparison can be by, and no other: a field added
// to one and not the other would group by nothing, or never be offered.
func TestGroupColumnsAreTheSystemFields(t *testing.T) {
	if got, want := store.GroupColumns(), group.SystemFields(); !slices.Equal(got, want) {
		t.Errorf("the store's group columns %v, the system fields %v", got, want)
	}
}
