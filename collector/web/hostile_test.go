package web

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/figures"
	"github.com/edgebench/edgebench/collector/rebuild"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/wire"
	"github.com/edgebench/edgebench/wire/wiretest"
)

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
		w, err := New(st, Options{})
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
			figures.Of(run, r.Fingerprint)
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
