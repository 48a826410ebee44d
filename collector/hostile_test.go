package collector

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/edgebench/edgebench/collector/rebuild"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/wire"
	"github.com/edgebench/edgebench/wire/wiretest"
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

// TestStoredMalformedResult: a result a device sent to an older collector
// with a sample's disk index of -1 is in the store; its page answers an
// error (every view of it: the repetitions too) instead of a broken
// connection, and the other pages work.
func TestStoredMalformedResult(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		st := e.Open(t)
		rng := rand.New(rand.NewPCG(9, 10))
		ok := storetest.FakeResult(rng, "lab", "pi-1", nil, time.Now(), 1000, 800)
		bad := storetest.FakeResult(rng, "lab", "pi-1", nil, time.Now(), 1000, 800)
		bad.Runs[0].System = &wire.System{Disks: []string{"sda"}, Partitions: []bool{true},
			Samples: []wire.SysSample{{T: 1000, Disks: []wire.DiskRate{{I: -1}}}}}
		if _, err := st.Ingest(ctx, []store.Incoming{storetest.Incoming(t, ok), storetest.Incoming(t, bad)}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Result(ctx, bad.ID); !errors.Is(err, wire.ErrMalformed) {
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
	})
}

// FuzzResultViews: whatever a device sends that decodes, the store's
// figures, the run page's charts and the reports of it can be computed.
// Seeds: testdata/fuzz/FuzzResultViews (hostile indexes).
func FuzzResultViews(f *testing.F) {
	rng := rand.New(rand.NewPCG(11, 12))
	r := storetest.FakeResult(rng, "lab", "pi-1", nil, time.Date(2025, 11, 3, 14, 5, 0, 0, time.UTC), 1000, 800)
	r.Runs[0].Timeline = r.Runs[0].Timeline[:min(3, len(r.Runs[0].Timeline))]
	b, _ := r.MarshalMsg(nil)
	f.Add(b)
	// An HTTPS and HTTP/2 run: its TLS, handshake histogram and resets.
	h2 := wiretest.ResultH2(f, 20)
	h2.Runs[0].System, h2.Runs[0].Timeline, h2.Runs[0].Waiting, h2.Runs[0].Processing = nil, nil, nil, nil
	f.Add(wiretest.Marshal(f, h2))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := wire.DecodeResult(b)
		if err != nil {
			return
		}
		for i := range r.Runs {
			run := &r.Runs[i]
			store.Figures(run, r.Fingerprint)
			RunCharts(run)
			if lr, err := rebuild.LoadResult(run, r.Spec); err == nil {
				report.WriteText(io.Discard, lr)
				report.WriteH2load(io.Discard, lr)
				report.WriteAB(io.Discard, lr, report.ABOptions{})
			}
			if run.System != nil {
				rebuild.SystemReport(run.System)
			}
		}
	})
}

// TestAllowHosts: the Host names the web UI answers to.
func TestAllowHosts(t *testing.T) {
	h := allowHosts("192.168.1.5:8080", []string{"Bench.LAN"}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for host, want := range map[string]int{
		"127.0.0.1:8080": 200, "localhost": 200, "[::1]:8080": 200, "[::1]": 200, "192.168.1.5:8080": 200, "10.0.0.9": 200,
		"bench.lan": 200, "BENCH.lan.:8080": 200, "": 200,
		"evil.example": 421, "evil.example:8080": 421, "localhost.evil.example": 421, "bench.lan.evil.example": 421,
		"127.0.0.1.nip.io": 421, "[fe80::1%25eth0]:8080": 421,
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/", nil)
		req.Host = host
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Host %q: %d, want %d", host, rec.Code, want)
		}
	}
}
