package collector

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/wire"
)

// TestQuotaAccountsFile: quotas in the accounts file, every device's and
// a device's own over them field by field, the defaults for the rest, -1
// for none; a bad one is refused.
func TestQuotaAccountsFile(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) string {
		p := filepath.Join(dir, "accounts.yaml")
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, err := LoadAccounts(write(`collector: {username: collector, password: x}
quota: {results_per_minute: 10, bytes_per_day: 1000000}
devices:
  - {fleet: lab, id: pi-1, password: one}
  - {fleet: lab, id: pi-2, password: two, quota: {results_per_minute: 2, max_labels: -1}}
`))
	if err != nil {
		t.Fatal(err)
	}
	of := quotaOf(a)
	q1, q2 := of(wire.Addr{Fleet: "lab", Device: "pi-1"}), of(wire.Addr{Fleet: "lab", Device: "pi-2"})
	if q1.ResultsPerMinute != 10 || q1.BytesPerDay != 1000000 || q1.MaxLabels != DefaultQuota.MaxLabels || q1.MaxResultBytes != DefaultQuota.MaxResultBytes {
		t.Errorf("pi-1 %+v", q1)
	}
	if q2.ResultsPerMinute != 2 || q2.BytesPerDay != 1000000 || q2.MaxLabels != -1 || q2.MaxLabelBytes != DefaultQuota.MaxLabelBytes {
		t.Errorf("pi-2 %+v", q2)
	}
	if _, err := LoadAccounts(write(`collector: {username: collector, password: x}
devices:
  - {fleet: lab, id: pi-1, password: one, quota: {bytes_per_day: -5}}
`)); err == nil || !strings.Contains(err.Error(), "bytes_per_day") {
		t.Errorf("a negative quota: %v", err)
	}
}

// TestQuotaTake: the rate of results with its burst, the bytes of the last
// 24 hours (an hour's slot freed when it is a day old), and what the store
// already holds of the device's day when the collector starts.
func TestQuotaTake(t *testing.T) {
	ctx := context.Background()
	q := Quota{ResultsPerMinute: 60, BurstResults: 3, BytesPerDay: 1000}
	stored := int64(400)
	qs := &quotas{of: func(wire.Addr) Quota { return q }, use: map[wire.Addr]*usage{},
		since: func(context.Context, wire.Addr, time.Time) (int64, error) { return stored, nil }}
	a := wire.Addr{Fleet: "lab", Device: "pi-1"}
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	for i := range 3 {
		if why, err := qs.take(ctx, a, 100, now); why != "" || err != nil {
			t.Fatalf("result %d of the burst: %q %v", i+1, why, err)
		}
	}
	if why, _ := qs.take(ctx, a, 100, now); !strings.Contains(why, "results a minute") {
		t.Errorf("past the burst: %q", why)
	}
	now = now.Add(time.Second) // one more token
	if why, _ := qs.take(ctx, a, 100, now); why != "" {
		t.Errorf("a second later: %q", why)
	}
	// 400 stored + 4 x 100 = 800: 300 more is over 1000.
	now = now.Add(time.Minute)
	if why, _ := qs.take(ctx, a, 300, now); !strings.Contains(why, "24 hours") {
		t.Errorf("over the day: %q", why)
	}
	if why, _ := qs.take(ctx, a, 200, now); why != "" {
		t.Errorf("up to the day's bytes: %q", why)
	}
	// A day later the slot is free again.
	now = now.Add(24 * time.Hour)
	if why, _ := qs.take(ctx, a, 900, now); why != "" {
		t.Errorf("a day later: %q", why)
	}
	other := wire.Addr{Fleet: "lab", Device: "pi-2"}
	stored = 950
	if why, _ := qs.take(ctx, other, 100, now); !strings.Contains(why, "24 hours") {
		t.Errorf("a device whose day the store holds: %q", why)
	}
}

// TestQuotaPerDevice: over the real broker, a device past its quota (a
// label too long, too many labels, a result too large decoded, results
// too fast) is acked as rejected with the reason and stores nothing more,
// while another device's results and triggers go on.
func TestQuotaPerDevice(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	listen := testenv.FreeAddr(t)
	broker := "tcp://" + listen
	acc := rulesAccounts()
	acc.Devices[1].Quota = &Quota{ResultsPerMinute: 1, BurstResults: 2, MaxLabels: 2, MaxResultBytes: 64 << 10}
	col, _ := startObserved(t, Config{DB: filepath.Join(t.TempDir(), "q.db"), Listen: listen, Accounts: acc, Web: "-"})
	d1 := device(t, broker, "lab", "pi-1", "one")
	defer d1.Close()
	d2 := device(t, broker, "lab", "pi-2", "two")
	defer d2.Close()
	rng := rand.New(rand.NewPCG(4, 4))
	send := func(d interface {
		PublishResult(context.Context, *wire.Result) error
	}, dev string, labels map[string]string, edit func(*wire.Result)) *wire.Result {
		r := fakeResult(rng, "lab", dev, labels, time.Now(), 1000, 800)
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

// TestStoredBytesSince: the bytes of a device's day, as the quota reads
// them at start, in both engines: its own results received since then.
func TestStoredBytesSince(t *testing.T) {
	eachEngine(t, func(t *testing.T, e storeEngine) {
		ctx := context.Background()
		s := e.open(t)
		rng := rand.New(rand.NewPCG(6, 6))
		now := time.Now()
		var batch []Incoming
		var want int64
		for i, at := range []time.Duration{-48 * time.Hour, -2 * time.Hour, -time.Minute} {
			in := incoming(t, fakeResult(rng, "lab", "pi-1", nil, now.Add(at), 1000, 800))
			in.Received = now.Add(at)
			if i > 0 {
				want += int64(len(in.Raw))
			}
			batch = append(batch, in, incoming(t, fakeResult(rng, "lab", "pi-2", nil, now, 1, 1)))
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
