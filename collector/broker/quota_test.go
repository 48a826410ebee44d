package broker

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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
	of := QuotaOf(a)
	q1, q2 := of(wire.Addr{Fleet: "lab", Device: "pi-1"}), of(wire.Addr{Fleet: "lab", Device: "pi-2"})
	if q1.ResultsPerMinute != 10 || q1.BytesPerDay != 1000000 || q1.MaxLabels != DefaultQuota().MaxLabels || q1.MaxResultBytes != DefaultQuota().MaxResultBytes {
		t.Errorf("pi-1 %+v", q1)
	}
	if q2.ResultsPerMinute != 2 || q2.BytesPerDay != 1000000 || q2.MaxLabels != -1 || q2.MaxLabelBytes != DefaultQuota().MaxLabelBytes {
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
	qs := NewQuotas(func(wire.Addr) Quota { return q }, func(context.Context, wire.Addr, time.Time) (int64, error) { return stored, nil })
	a := wire.Addr{Fleet: "lab", Device: "pi-1"}
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	for i := range 3 {
		if why, err := qs.Take(ctx, a, 100, now); why != "" || err != nil {
			t.Fatalf("result %d of the burst: %q %v", i+1, why, err)
		}
	}
	if why, _ := qs.Take(ctx, a, 100, now); !strings.Contains(why, "results a minute") {
		t.Errorf("past the burst: %q", why)
	}
	now = now.Add(time.Second) // one more token
	if why, _ := qs.Take(ctx, a, 100, now); why != "" {
		t.Errorf("a second later: %q", why)
	}
	// 400 stored + 4 x 100 = 800: 300 more is over 1000.
	now = now.Add(time.Minute)
	if why, _ := qs.Take(ctx, a, 300, now); !strings.Contains(why, "24 hours") {
		t.Errorf("over the day: %q", why)
	}
	if why, _ := qs.Take(ctx, a, 200, now); why != "" {
		t.Errorf("up to the day's bytes: %q", why)
	}
	// A day later the slot is free again.
	now = now.Add(24 * time.Hour)
	if why, _ := qs.Take(ctx, a, 900, now); why != "" {
		t.Errorf("a day later: %q", why)
	}
	// The tokens come a minute's worth a minute: 60 a minute, one a
	// second; a result a second past an emptied burst is refused until
	// the next second.
	now = now.Add(time.Hour)
	for range 3 {
		qs.Take(ctx, a, 1, now)
	}
	if why, _ := qs.Take(ctx, a, 1, now.Add(500*time.Millisecond)); !strings.Contains(why, "results a minute") {
		t.Errorf("half a second past the burst: %q, want refused", why)
	}
	other := wire.Addr{Fleet: "lab", Device: "pi-2"}
	stored = 950
	if why, _ := qs.Take(ctx, other, 100, now); !strings.Contains(why, "24 hours") {
		t.Errorf("a device whose day the store holds: %q", why)
	}
}

// TestQuotaHoursGoneBy: the bytes of the hours gone by leave the day
// when their hour is 24 hours old, however many hours passed between two
// results (each skipped hour's slot emptied, not only the current one's).
func TestQuotaHoursGoneBy(t *testing.T) {
	ctx := context.Background()
	q := Quota{ResultsPerMinute: -1, BytesPerDay: 1000}
	qs := NewQuotas(func(wire.Addr) Quota { return q }, func(context.Context, wire.Addr, time.Time) (int64, error) { return 0, nil })
	a := wire.Addr{Fleet: "lab", Device: "pi-1"}
	h0 := time.Date(2026, 12, 4, 0, 30, 0, 0, time.UTC)
	for _, c := range []struct {
		hours int
		n     int64
		ok    bool
	}{
		{0, 900, true},  // hour 0
		{2, 100, true},  // hour 2: 1000 in the day
		{3, 1, false},   // hour 3: the day is full
		{25, 800, true}, // hour 25: hour 0 left the day, hour 2's 100 is still in it
		{25, 101, false},
	} {
		why, err := qs.Take(ctx, a, c.n, h0.Add(time.Duration(c.hours)*time.Hour))
		if err != nil || (why == "") != c.ok {
			t.Errorf("%d bytes at hour %d: %q %v, want taken %v", c.n, c.hours, why, err, c.ok)
		}
	}
}

// TestQuotaEvents: events have a rate and a burst of their own, and share
// the bytes of the day with results; a reason past max_reason_bytes is
// cut at a character's start and says how much was cut.
func TestQuotaEvents(t *testing.T) {
	ctx := context.Background()
	q := Quota{ResultsPerMinute: 60, BurstResults: 5, EventsPerMinute: 60, BurstEvents: 2, BytesPerDay: 1000, MaxReasonBytes: 5}
	qs := NewQuotas(func(wire.Addr) Quota { return q }, func(context.Context, wire.Addr, time.Time) (int64, error) { return 0, nil })
	a := wire.Addr{Fleet: "lab", Device: "pi-1"}
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	for i := range 2 {
		if why, err := qs.TakeEvent(ctx, a, 100, now); why != "" || err != nil {
			t.Fatalf("event %d of the burst: %q %v", i+1, why, err)
		}
	}
	if why, _ := qs.TakeEvent(ctx, a, 100, now); why != "quota: over this device's 60 events a minute (bursts of 2)" {
		t.Errorf("past the burst: %q", why)
	}
	// Results have their own rate: taken, up to the bytes of the day.
	if why, _ := qs.Take(ctx, a, 700, now); why != "" {
		t.Errorf("a result after the events: %q", why)
	}
	if why, _ := qs.Take(ctx, a, 200, now); !strings.Contains(why, "1100 bytes in 24 hours") {
		t.Errorf("a result past the day's bytes, events counted: %q", why)
	}
	now = now.Add(time.Second)
	if why, _ := qs.TakeEvent(ctx, a, 101, now); !strings.Contains(why, "1001 bytes in 24 hours") {
		t.Errorf("an event past the day's bytes: %q", why)
	}
	if why, _ := qs.TakeEvent(ctx, a, 100, now); why != "" {
		t.Errorf("an event up to the day's bytes: %q", why)
	}
	for _, c := range []struct{ in, want string }{
		{"short", "short"},
		{"longer", "longe ... (1 bytes cut)"},
		{"abcdé", "abcd ... (2 bytes cut)"}, // é is 2 bytes: not split
		{"abc€d", "abc ... (4 bytes cut)"},  // € is 3 bytes from byte 3
	} {
		if got, cut := q.CutReason(c.in); got != c.want || cut != (got != c.in) {
			t.Errorf("CutReason(%q) = %q %v, want %q", c.in, got, cut, c.want)
		}
	}
	if got, cut := (Quota{MaxReasonBytes: -1}).CutReason("anything long"); got != "anything long" || cut {
		t.Errorf("no cap: %q %v", got, cut)
	}
}

// TestQuotaDayReadOnce: the bytes a device's results stored in its last
// day are read once however many of its first results arrive together
// (they wait for that one read), not at all when its bytes a day are not
// limited, and again after a read failed.
func TestQuotaDayReadOnce(t *testing.T) {
	ctx := context.Background()
	q := Quota{ResultsPerMinute: -1, BytesPerDay: 1000}
	var reads atomic.Int64
	release := make(chan struct{})
	fail := atomic.Bool{}
	qs := NewQuotas(func(a wire.Addr) Quota {
		if a.Device == "free" {
			return Quota{ResultsPerMinute: -1, BytesPerDay: -1}
		}
		return q
	}, func(context.Context, wire.Addr, time.Time) (int64, error) {
		reads.Add(1)
		<-release
		if fail.Load() {
			return 0, errors.New("store down")
		}
		return 500, nil
	})
	a := wire.Addr{Fleet: "lab", Device: "pi-1"}
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	const n = 50
	whys := make(chan string, n)
	for range n {
		go func() {
			why, err := qs.Take(ctx, a, 10, now)
			if err != nil {
				why = err.Error()
			}
			whys <- why
		}()
	}
	for reads.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // the others arrive meanwhile
	close(release)
	for range n {
		if why := <-whys; why != "" {
			t.Errorf("a result within the day's bytes: %q", why)
		}
	}
	if r := reads.Load(); r != 1 {
		t.Errorf("the day read %d times for %d results arriving together, want once", r, n)
	}
	// 500 stored + 50 x 10 = 1000: one byte more is over.
	if why, _ := qs.Take(ctx, a, 1, now); !strings.Contains(why, "24 hours") {
		t.Errorf("past the day's bytes with what the store held: %q", why)
	}
	if why, err := qs.Take(ctx, wire.Addr{Fleet: "lab", Device: "free"}, 1<<40, now); why != "" || err != nil || reads.Load() != 1 {
		t.Errorf("a device without a limit of bytes: %q %v, %d reads (want none of its own)", why, err, reads.Load())
	}
	fail.Store(true)
	b := wire.Addr{Fleet: "lab", Device: "pi-2"}
	if _, err := qs.Take(ctx, b, 10, now); err == nil {
		t.Error("the day's read failed: taken, want the store's error")
	}
	fail.Store(false)
	if why, err := qs.Take(ctx, b, 10, now); why != "" || err != nil || reads.Load() != 3 {
		t.Errorf("after a failed read: %q %v, %d reads (want it read again)", why, err, reads.Load())
	}
}
