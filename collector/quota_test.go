package collector

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/broker"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/wire"
)

// TestQuotaPerDevice: over the real broker, a device past its quota (a
// label too long, too many labels, a result too large decoded, results
// too fast) is acked as rejected with the reason and stores nothing more,
// while another device's results and triggers go on.
func TestQuotaPerDevice(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	listen := testenv.FreeAddr(t)
	brokerURL := "tcp://" + listen
	acc := rulesAccounts()
	acc.Devices[1].Quota = &broker.Quota{ResultsPerMinute: 1, BurstResults: 2, MaxLabels: 2, MaxResultBytes: 64 << 10}
	col, _ := startObserved(t, Config{DB: filepath.Join(t.TempDir(), "q.db"), Listen: listen, Accounts: acc, Web: "-"})
	d1 := device(t, brokerURL, "lab", "pi-1", "one")
	defer d1.Close()
	d2 := device(t, brokerURL, "lab", "pi-2", "two")
	defer d2.Close()
	rng := rand.New(rand.NewPCG(4, 4))
	send := func(d interface {
		PublishResult(context.Context, *wire.Result) error
	}, dev string, labels map[string]string, edit func(*wire.Result)) *wire.Result {
		r := storetest.FakeResult(rng, "lab", dev, labels, time.Now(), 1000, 800)
		if edit != nil {
			edit(r)
		}
		if err := d.PublishResult(ctx, r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	padded := send(d2, "pi-2", map[string]string{"pad": strings.Repeat("x", 200_000)}, nil)
	wantRejected(t, ctx, d2, padded.ID, "over this device's 256 for a key or a value")
	many := send(d2, "pi-2", map[string]string{"a": "1", "b": "2", "c": "3"}, nil)
	wantRejected(t, ctx, d2, many.ID, "3 labels, over this device's 2")
	big := send(d2, "pi-2", nil, func(r *wire.Result) {
		r.Runs[0].Timeline = make([]wire.Second, 5000)
		for i := range r.Runs[0].Timeline {
			r.Runs[0].Timeline[i].T = int32(i)
		}
	})
	wantRejected(t, ctx, d2, big.ID, "decoded, over this device's 65536")
	for i := range 2 {
		r := send(d2, "pi-2", nil, nil)
		if err := d2.WaitAck(ctx, r.ID); err != nil {
			t.Fatalf("pi-2's result %d within its burst: %v", i+1, err)
		}
	}
	fast := send(d2, "pi-2", nil, nil)
	wantRejected(t, ctx, d2, fast.ID, "over this device's 1 results a minute")
	// pi-1, on the default quota, is not held back by pi-2's.
	for range 5 {
		r := send(d1, "pi-1", map[string]string{"server": "nginx"}, nil)
		if err := d1.WaitAck(ctx, r.ID); err != nil {
			t.Fatal(err)
		}
	}
	if n, _, _ := col.Store().CountResults(ctx); n != 7 {
		t.Errorf("%d stored, want 7", n)
	}
}
