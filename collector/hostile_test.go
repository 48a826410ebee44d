package collector

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/edgebench/edgebench/loadgen"
	"github.com/edgebench/edgebench/transport"
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
func badDiskResult(rng *rand.Rand) *transport.Result {
	r := fakeResult(rng, "lab", "pi-1", nil, time.Now(), 1000, 800)
	r.Runs[0].System = &transport.System{Disks: []string{"sda"}, Partitions: []bool{true},
		Summary: transport.SysSummary{Disks: []transport.DiskSummary{{I: -1}}}}
	return r
}

// TestIngestSurvivesAPanic: when the store panics on one result of a
// batch, the others of the batch are stored and acked, that one fails
// (not acked: its device keeps it), the panic is counted and logged, and
// the ingest goes on.
func TestIngestSurvivesAPanic(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	col, logs := startObserved(t, Config{DB: filepath.Join(t.TempDir(), "p.db"), Listen: freeAddr(t), Accounts: testAccounts(), Web: "-"})
	rng := rand.New(rand.NewPCG(7, 8))
	var good []*transport.Result
	for range 20 {
		good = append(good, fakeResult(rng, "lab", "pi-1", nil, time.Now(), 1000, 800))
	}
	bad := badDiskResult(rng)
	all := append([]*transport.Result{bad}, good...)
	errs := make([]error, len(all))
	var wg sync.WaitGroup
	for i, r := range all {
		wg.Go(func() {
			b, _ := r.MarshalMsg(nil)
			errs[i] = col.onResult(ctx, transport.Addr{Fleet: "lab", Device: "pi-1"}, r, b)
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
	next := fakeResult(rng, "lab", "pi-1", nil, time.Now(), 1000, 800)
	b, _ := next.MarshalMsg(nil)
	if err := col.onResult(ctx, transport.Addr{Fleet: "lab", Device: "pi-1"}, next, b); err != nil {
		t.Fatal(err)
	}
}

// TestStoredMalformedResult: a result a device sent to an older collector
// with a sample's disk index of -1 is in the store; its page answers an
// error (every view of it: the repetitions too) instead of a broken
// connection, and the other pages work.
func TestStoredMalformedResult(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t)
	rng := rand.New(rand.NewPCG(9, 10))
	ok := fakeResult(rng, "lab", "pi-1", nil, time.Now(), 1000, 800)
	bad := fakeResult(rng, "lab", "pi-1", nil, time.Now(), 1000, 800)
	bad.Runs[0].System = &transport.System{Disks: []string{"sda"}, Partitions: []bool{true},
		Samples: []transport.SysSample{{T: 1000, Disks: []transport.DiskRate{{I: -1}}}}}
	if _, err := st.Ingest(ctx, []Incoming{incoming(t, ok), incoming(t, bad)}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Result(ctx, bad.ID); !errors.Is(err, transport.ErrMalformed) {
		t.Errorf("reading it back: %v", err)
	}
	w, err := NewWeb(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) int {
		rec := httptest.NewRecorder()
		w.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec.Code
	}
	for _, path := range []string{"/runs/" + bad.ID, "/runs/" + bad.ID + "?run=0", "/runs/" + bad.ID + "?run=1"} {
		if code := get(path); code != http.StatusInternalServerError {
			t.Errorf("GET %s: %d", path, code)
		}
	}
	for _, path := range []string{"/", "/runs/" + ok.ID} {
		if code := get(path); code != 200 {
			t.Errorf("GET %s: %d", path, code)
		}
	}
}

// FuzzResultViews: whatever a device sends that decodes, the store's
// figures, the run page's charts and the reports of it can be computed.
// Seeds: testdata/fuzz/FuzzResultViews (hostile indexes).
func FuzzResultViews(f *testing.F) {
	rng := rand.New(rand.NewPCG(11, 12))
	r := fakeResult(rng, "lab", "pi-1", nil, time.Date(2025, 11, 3, 14, 5, 0, 0, time.UTC), 1000, 800)
	r.Runs[0].Timeline = r.Runs[0].Timeline[:min(3, len(r.Runs[0].Timeline))]
	b, _ := r.MarshalMsg(nil)
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := transport.DecodeResult(b)
		if err != nil {
			return
		}
		for i := range r.Runs {
			run := &r.Runs[i]
			Figures(run, r.Fingerprint)
			RunCharts(run)
			if lr, err := run.Loadgen(r.Spec); err == nil {
				loadgen.WriteText(io.Discard, lr)
			}
			if run.System != nil {
				run.System.Report()
			}
		}
	})
}
