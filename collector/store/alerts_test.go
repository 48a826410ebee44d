package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/storetest"
)

// TestClaimAlertOnce: two collectors on one store (two handles of the
// same database) raise an alert once: the first claim of a key, kind and
// instance is this collector's, the same claim from the other is not; a
// new instance of the same key (the device quiet again later) is claimed
// anew. In each engine.
func TestClaimAlertOnce(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		db := e.DB(t)
		var ss [2]*store.Store
		for i := range ss {
			s, err := store.Open(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			ss[i] = s
		}
		at := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
		for _, c := range []struct {
			s        *store.Store
			instance string
			want     bool
		}{{ss[0], "1", true}, {ss[1], "1", false}, {ss[0], "1", false}, {ss[1], "2", true}, {ss[0], "2", false}} {
			got, err := c.s.ClaimAlert(ctx, "device:lab/pi-1", "quiet", c.instance, at, nil)
			if err != nil || got != c.want {
				t.Errorf("claim of instance %s: %v %v, want %v", c.instance, got, err, c.want)
			}
		}
	})
}
