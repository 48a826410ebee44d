package compare

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/figures"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/wire"
)

// The seeds' table (the kangle seed: per server, mean latency, its
// stdev, the peak, the requests, the timeouts, user % and idle %):
// --columns seed shows those columns in that order, each figure where it
// belongs: the peak the highest latency of any run (not a median of the
// maxima: 3.16 s shown where one run had 7.36 s), the requests and
// timeouts the runs' totals, user and idle the medians of the runs'.
func TestSeedColumns(t *testing.T) {
	ctx := context.Background()
	s := storetest.OpenSQLite(t)
	rng := rand.New(rand.NewPCG(7, 7))
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	type want struct {
		requests, timeouts, peak float64
		user, idle               []float64
	}
	wants := map[string]*want{"nginx": {}, "kangle": {}}
	var batch []store.Incoming
	for i := range 5 {
		for server, w := range wants {
			busy := int64(2000 + 1000*i)
			if server == "kangle" {
				busy += 500
			}
			p50 := int64(800 + 400*i) // a different maximum each run
			r := storetest.FakeResult(rng, "lab", "pi-1", map[string]string{"server": server}, at, float64(1000+100*i), p50)
			r.Runs[0] = storetest.FakeRun(rng, at, float64(1000+100*i), p50, busy)
			f := figures.Of(&r.Runs[0], r.Fingerprint)
			w.requests += float64(r.Runs[0].Completed)
			w.timeouts += float64(r.Runs[0].Errors.Timeout)
			w.peak = math.Max(w.peak, f.MaxUS)
			w.user = append(w.user, f.CPUUser)
			w.idle = append(w.idle, f.CPUIdle)
			batch = append(batch, storetest.Incoming(t, r))
			at = at.Add(time.Minute)
		}
	}
	if _, err := s.Ingest(ctx, batch); err != nil {
		t.Fatal(err)
	}
	cols, err := ParseColumns("seed")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Runs(ctx, s, Options{By: "server", Columns: cols})
	if err != nil {
		t.Fatal(err)
	}
	median := func(v []float64) float64 {
		v = slices.Sorted(slices.Values(v))
		return v[len(v)/2]
	}
	for _, g := range c.Tables[0].Groups {
		w := wants[g.Key]
		for name, v := range map[string]float64{"requests": w.requests, "timeouts": w.timeouts} {
			if got := g.Stats[name].Sum; got != v {
				t.Errorf("%s %s: %v, want the runs' total %v", g.Key, name, got, v)
			}
		}
		if got := g.Stats["peak"].Max; got != w.peak || got <= g.Stats["peak"].Median {
			t.Errorf("%s peak: %v, want the highest of the runs' maxima %v (their median %v)", g.Key, got, w.peak, g.Stats["peak"].Median)
		}
		// What the cells show: the peak and the totals, not medians.
		for name, v := range map[string]float64{"peak": w.peak, "requests": w.requests, "timeouts": w.timeouts} {
			m, _ := MetricByName(name)
			if got, _, _ := m.Shown(g.Stats[name]); got != v {
				t.Errorf("%s %s cell: %v, want %v", g.Key, name, got, v)
			}
		}
		if got := g.Stats["cpu_user"].Median; math.Abs(got-median(w.user)) > 1e-9 {
			t.Errorf("%s user %%: %v, want %v", g.Key, got, median(w.user))
		}
		if got := g.Stats["cpu_idle"].Median; math.Abs(got-median(w.idle)) > 1e-9 {
			t.Errorf("%s idle %%: %v, want %v", g.Key, got, median(w.idle))
		}
	}
	var b bytes.Buffer
	if err := c.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	t.Log("\n" + text)
	header := ""
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "server") && strings.Contains(line, "mean") {
			header = line
			break
		}
	}
	last := -1
	for _, title := range []string{"mean", "stdev", "peak", "requests", "timeouts", "user %", "idle %"} {
		i := strings.Index(header, title)
		if i <= last {
			t.Errorf("column %q not in the seeds' order in %q", title, header)
		}
		last = i
	}
	for _, not := range []string{"req/s", "p99", "mem MB"} {
		if strings.Contains(header, not) {
			t.Errorf("the seeds' table shows %q: %q", not, header)
		}
	}
	// The peak printed is the highest run's.
	if !strings.Contains(text, "the highest latency of any run of the group, not a median") {
		t.Errorf("the peak column is not said to be the highest of the runs:\n%s", text)
	}
}

// One page served by different hosts (the Pi seed: the Pi, the laptop, a
// remote server, each its own URL) is one table with --same-path, and
// without it the tables say that they differ only in their host; never
// pooled silently.
func TestSamePath(t *testing.T) {
	ctx := context.Background()
	s := storetest.OpenSQLite(t)
	rng := rand.New(rand.NewPCG(8, 8))
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var batch []store.Incoming
	for i := range 3 {
		for dev, host := range map[string]string{"pi": "http://192.168.2.10", "laptop": "http://127.0.0.1", "remote": "https://bench.example.org"} {
			r := storetest.FakeResult(rng, "lab", dev, nil, at, float64(900+10*i), 700)
			r.Spec.URL = host + "/index.html"
			batch = append(batch, storetest.Incoming(t, r))
			at = at.Add(time.Minute)
		}
	}
	r := storetest.FakeResult(rng, "lab", "pi", nil, at, 900, 700)
	r.Spec.URL = "http://192.168.2.10/other.html" // another page: never joined
	batch = append(batch, storetest.Incoming(t, r))
	if _, err := s.Ingest(ctx, batch); err != nil {
		t.Fatal(err)
	}
	apart, err := Runs(ctx, s, Options{By: "device"})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	apart.WriteText(&b)
	if len(apart.Tables) != 4 || !strings.Contains(b.String(), "3 tables differ only in their host") || !strings.Contains(b.String(), "--same-path") {
		t.Errorf("apart: %d tables\n%s", len(apart.Tables), b.String())
	}
	joined, err := Runs(ctx, s, Options{By: "device", SamePath: true})
	if err != nil {
		t.Fatal(err)
	}
	var one *Table
	for i := range joined.Tables {
		if strings.HasSuffix(joined.Tables[i].Spec.URL, "/index.html") {
			one = &joined.Tables[i]
		}
	}
	if len(joined.Tables) != 2 || one == nil || one.Spec.URL != "/index.html" || len(one.Groups) != 3 {
		t.Fatalf("--same-path: %d tables, %+v", len(joined.Tables), one)
	}
	for _, g := range one.Groups {
		if g.N != 3 {
			t.Errorf("%s: %d runs, want its 3", g.Key, g.N)
		}
	}
	b.Reset()
	joined.WriteText(&b)
	for _, host := range []string{"http://192.168.2.10", "http://127.0.0.1", "https://bench.example.org"} {
		if !strings.Contains(b.String(), host) {
			t.Errorf("the joined table does not say its host %s:\n%s", host, b.String())
		}
	}
	_ = wire.SchemaVersion
}
