package compare

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/group"
	"github.com/edgebench/edgebench/collector/stats"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/internal/golden"
	"github.com/edgebench/edgebench/wire"
)

func TestCompareByServer(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		storetest.SeedCompare(t, s)
		c, err := Runs(ctx, s, Options{By: "server", Metrics: []string{"rps", "p50", "cpu"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Tables) != 1 {
			t.Fatalf("%d tables of one spec", len(c.Tables))
		}
		tb := c.Tables[0]
		if len(tb.Groups) != 2 || tb.Base != "nginx" || tb.Groups[1].Key != "kangle" || tb.Groups[0].N != 10 {
			t.Fatalf("groups %+v", tb.Groups)
		}
		k := tb.Groups[1]
		rps := k.Deltas["rps"]
		if !rps.Significant || rps.Pct < 17 || rps.Pct > 23 {
			t.Errorf("kangle req/s delta %v", rps)
		}
		if p50 := k.Deltas["p50"]; !p50.Significant || p50.Pct > -10 {
			t.Errorf("kangle p50 delta %v", p50)
		}
		// Both servers ran with the same CPU figures: no difference.
		if cpu := k.Deltas["cpu"]; cpu.Significant {
			t.Errorf("cpu delta called significant: %v", cpu)
		}
		var out bytes.Buffer
		if err := c.WriteText(&out); err != nil {
			t.Fatal(err)
		}
		text := out.String()
		t.Log("\n" + text)
		for _, want := range []string{"spec: GET http://127.0.0.1:8080/ · 10 connections · keep-alive", "server", "req/s", "p99", "timeouts", "CPU %",
			"IO KB/s", "mem MB", "nginx", "kangle", "vs nginx", " ~ "} {
			if !strings.Contains(text, want) {
				t.Errorf("report lacks %q", want)
			}
		}
		if !regexp.MustCompile(`kangle\s+\+\d+\.\d\d% \[`).MatchString(text) {
			t.Errorf("no significant req/s delta for kangle in\n%s", text)
		}

		c, err = Runs(ctx, s, Options{By: "device"})
		if err != nil {
			t.Fatal(err)
		}
		// pi-2 is pi-1 again with different noise: mixed servers make both
		// groups bimodal alike.
		if d := c.Tables[0].Groups[1].Deltas["rps"]; d.Significant {
			t.Errorf("device delta significant: %v", d)
		}
		if _, err := Runs(ctx, s, Options{By: "server", Metrics: []string{"bogus"}}); err == nil {
			t.Error("unknown metric accepted")
		}
		if _, err := Runs(ctx, s, Options{By: "server", Base: "caddy"}); err == nil {
			t.Error("missing base group accepted")
		}
		c, err = Runs(ctx, s, Options{By: "server", Base: "kangle"})
		if err != nil || c.Tables[0].Base != "kangle" || c.Tables[0].Groups[0].Deltas["rps"].Pct > -10 {
			t.Errorf("base kangle: %+v %v", c, err)
		}
	})
}

func TestCompareExcludeThrottled(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		storetest.SeedCompare(t, s)
		c, err := Runs(ctx, s, Options{By: "server", Filter: store.Filter{ExcludeThrottled: true}})
		if err != nil || len(c.Tables) != 1 || len(c.Tables[0].Groups) != 2 {
			t.Fatal(c, err)
		}
		empty, err := Runs(ctx, s, Options{By: "server", Filter: store.Filter{Fleet: "none"}})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := empty.WriteText(&out); err != nil || !strings.Contains(out.String(), "no succeeded runs") {
			t.Errorf("empty: %q %v", out.String(), err)
		}
	})
}

// benchLine is the Go benchmark format's result line.
var benchLine = regexp.MustCompile(`^Benchmark[^\s]+ \d+( [0-9.e+-]+ [^\s]+)+$`)

func TestExport(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		storetest.SeedCompare(t, s)

		var b bytes.Buffer
		if err := Export(ctx, &b, s, "benchfmt", store.Filter{}); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(b.String()), "\n")
		bench, servers := 0, map[string]bool{}
		for _, l := range lines {
			switch {
			case strings.HasPrefix(l, "Benchmark"):
				if !benchLine.MatchString(l) || !strings.Contains(l, " req/s") || !strings.Contains(l, " sec/op") {
					t.Errorf("bad benchmark line %q", l)
				}
				bench++
			case strings.HasPrefix(l, "server: "):
				servers[strings.TrimPrefix(l, "server: ")] = true
			case l == "" || strings.HasPrefix(l, "Unit ") || regexp.MustCompile(`^[a-z][^\s:]*: `).MatchString(l):
			default:
				t.Errorf("line is neither config nor benchmark: %q", l)
			}
		}
		if bench != 20 || !servers["nginx"] || !servers["kangle"] || !strings.Contains(b.String(), "device: pi-1") {
			t.Errorf("%d benchmark lines, servers %v\n%s", bench, servers, b.String())
		}

		b.Reset()
		if err := Export(ctx, &b, s, "csv", store.Filter{Device: "pi-1"}); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(&b).ReadAll()
		if err != nil || len(recs) != 11 || recs[0][0] != "id" {
			t.Fatalf("csv: %d records %v", len(recs), err)
		}

		b.Reset()
		if err := Export(ctx, &b, s, "json", store.Filter{}); err != nil {
			t.Fatal(err)
		}
		var rows []map[string]any
		if err := json.Unmarshal(b.Bytes(), &rows); err != nil || len(rows) != 20 || rows[0]["rps"] == nil {
			t.Fatalf("json: %d rows %v", len(rows), err)
		}
		if err := Export(ctx, &b, s, "xml", store.Filter{}); err == nil {
			t.Error("xml accepted")
		}
	})
}

// TestCompareJSON: the JSON form carries the groups, their figures and
// the deltas; an interval too small to exist is null, not an error.
func TestCompareJSON(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		storetest.SeedCompare(t, s)
		c, err := Runs(ctx, s, Options{By: "server", Metrics: []string{"rps", "cpu"}})
		if err != nil {
			t.Fatal(err)
		}
		// Groups of one run each: the delta has no interval (NaN).
		one := &Comparison{By: "server", Tested: []string{"rps"}, Tables: []Table{{Base: "a", Groups: []Group{
			{Key: "a", N: 1, Stats: map[string]stats.GroupStats{"rps": stats.Describe([]float64{100})}},
			{Key: "b", N: 1, Stats: map[string]stats.GroupStats{"rps": stats.Describe([]float64{120})},
				Deltas: map[string]stats.Delta{"rps": stats.Compare([]float64{100}, []float64{120})}},
		}}}}
		nan := 0
		for _, g := range one.Tables[0].Groups {
			for _, d := range g.Deltas {
				if math.IsNaN(d.LowPct) {
					nan++
				}
			}
		}
		if nan == 0 {
			t.Fatalf("the small comparison has no interval left out: %+v", one.Tables)
		}
		for _, cmp := range []*Comparison{c, one} {
			var b bytes.Buffer
			if err := cmp.WriteJSON(&b); err != nil {
				t.Fatalf("WriteJSON: %v", err)
			}
			var got struct {
				Tables []struct {
					Base   string `json:"base"`
					Groups []struct {
						Key    string                               `json:"key"`
						N      int                                  `json:"n"`
						Stats  map[string]struct{ Median *float64 } `json:"stats"`
						Deltas map[string]struct {
							Pct         *float64 `json:"pct"`
							Low         *float64 `json:"pct_ci95_low"`
							Of          string   `json:"pct_of"`
							Significant bool     `json:"significant"`
						} `json:"deltas"`
					} `json:"groups"`
				} `json:"tables"`
			}
			if err := json.Unmarshal(b.Bytes(), &got); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, b.String())
			}
			if len(got.Tables) != 1 || len(got.Tables[0].Groups) != len(cmp.Tables[0].Groups) || got.Tables[0].Base != cmp.Tables[0].Base {
				t.Fatalf("JSON %+v, want %+v", got.Tables, cmp.Tables)
			}
			for i, g := range cmp.Tables[0].Groups {
				for k, d := range g.Deltas {
					jd := got.Tables[0].Groups[i].Deltas[k]
					if jd.Significant != d.Significant || (jd.Pct == nil) != math.IsNaN(d.Pct) || (jd.Low == nil) != math.IsNaN(d.LowPct) || jd.Of != d.PctOf || jd.Of != stats.PctOfRatio {
						t.Errorf("%s %s: JSON %+v, delta %+v", g.Key, k, jd, d)
					}
				}
			}
		}
		var b bytes.Buffer
		c.WriteJSON(&b)
		if !strings.Contains(b.String(), `"significant": true`) {
			t.Errorf("kangle's req/s difference not significant in JSON:\n%s", b.String())
		}
	})
}

// TestCompareKeepsSpecsApart: runs of another URL are another experiment.
// The nginx group of /index.html does not take in the /mixed run (its
// req/s would spread over ±100 % and the median would hide its 99
// timeouts); /mixed gets a table of its own that shows them.
func TestCompareKeepsSpecsApart(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		s := e.Open(t)
		storetest.SeedMixedSpecs(t, s)
		c, err := Runs(context.Background(), s, Options{By: "server"})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := c.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		text := b.String()
		t.Log("\n" + text)
		index := strings.Index(text, "GET http://127.0.0.1:8080/index.html")
		mixed := strings.Index(text, "GET http://127.0.0.1:8080/mixed")
		if index < 0 || mixed < index {
			t.Fatalf("no table per spec:\n%s", text)
		}
		nginx := regexp.MustCompile(`(?m)^\s*nginx\s+(\d+)\s`)
		if m := nginx.FindAllStringSubmatch(text[index:mixed], -1); len(m) != 1 || m[0][1] != "3" {
			t.Errorf("the /index.html table's nginx group: %v, want 3 runs", m)
		}
		if m := nginx.FindAllStringSubmatch(text[mixed:], -1); len(m) != 1 || m[0][1] != "1" {
			t.Errorf("the /mixed table's nginx group: %v, want 1 run", m)
		}
		// The /mixed row shows its 99 timeouts: the header names the column,
		// the row has the count in it.
		if !regexp.MustCompile(`(?m)^\s*nginx\s+1\s.*\s99\s`).MatchString(text[mixed:]) {
			t.Errorf("the 99 timeouts of /mixed are not shown:\n%s", text[mixed:])
		}
		for _, pct := range regexp.MustCompile(`±(\d+\.\d)%`).FindAllStringSubmatch(text, -1) {
			if v, _ := strconv.ParseFloat(pct[1], 64); v > 50 {
				t.Errorf("an interval of ±%s%%: different work pooled?", pct[1])
			}
		}
	})
}

// TestCompareBySpecPart: a comparison by a part of the spec (here the
// URL) compares the runs that differ in it, and only in it.
func TestCompareBySpecPart(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		s := e.Open(t)
		storetest.SeedMixedSpecs(t, s)
		c, err := Runs(context.Background(), s, Options{By: "url", Filter: store.Filter{Labels: map[string]string{"server": "nginx"}}})
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Tables) != 1 || len(c.Tables[0].Groups) != 2 || c.Tables[0].Spec.URL != "" {
			t.Fatalf("by url: %+v", c.Tables)
		}
		if g := c.Tables[0].Groups; g[0].Key != "http://127.0.0.1:8080/index.html" || g[0].N != 3 || g[1].Key != "http://127.0.0.1:8080/mixed" || g[1].N != 1 {
			t.Errorf("groups %+v", g)
		}
		c, err = Runs(context.Background(), s, Options{By: "keepalive"})
		if err != nil || len(c.Tables) != 2 || c.Tables[0].Groups[0].Key != "keep-alive" {
			t.Errorf("by keepalive: %+v %v", c, err)
		}
	})
}

// TestCompareByUnknownKey: a key no run has (a typo) is the asker's
// mistake, and the error lists the keys there are, labels included.
func TestCompareByUnknownKey(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		s := e.Open(t)
		storetest.SeedCompare(t, s)
		_, err := Runs(context.Background(), s, Options{By: "sevrer"})
		if err == nil {
			t.Fatal("--by sevrer grouped every run under one key")
		}
		for _, want := range []string{`"sevrer"`, "device", "board", "url", "connections", "server"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q lacks %q", err, want)
			}
		}
		var qe *QueryError
		if !errors.As(err, &qe) {
			t.Errorf("%T is not a QueryError", err)
		}
		// A key some runs have: the others fall in "-".
		r := storetest.FakeResult(rand.New(rand.NewPCG(5, 6)), "lab", "pi-1", map[string]string{"build": "b1"}, time.Now(), 1000, 800)
		if _, err := s.Ingest(context.Background(), []store.Incoming{storetest.Incoming(t, r)}); err != nil {
			t.Fatal(err)
		}
		c, err := Runs(context.Background(), s, Options{By: "build"})
		if err != nil || len(c.Tables[0].Groups) != 2 || c.Tables[0].Groups[0].Key != "-" {
			t.Errorf("by build: %+v %v", c, err)
		}
		if _, err := Runs(context.Background(), s, Options{By: "server", Base: "caddy"}); !errors.As(err, &qe) ||
			!strings.Contains(err.Error(), "nginx, kangle") {
			t.Errorf("a base with no runs: %v", err)
		}
	})
}

// TestCompareGolden: the text and JSON forms of two comparisons, one of
// a single spec and one of the mixed specs.
func TestCompareGolden(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		for _, tc := range []struct {
			name string
			seed func(testing.TB, *store.Store)
			o    Options
		}{
			{"compare-server", storetest.SeedCompare, Options{By: "server", Metrics: []string{"rps", "p50", "p99", "cpu"}}},
			{"compare-mixed", storetest.SeedMixedSpecs, Options{By: "server"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				s := e.Open(t)
				tc.seed(t, s)
				c, err := Runs(context.Background(), s, tc.o)
				if err != nil {
					t.Fatal(err)
				}
				var text, js bytes.Buffer
				if err := c.WriteText(&text); err != nil {
					t.Fatal(err)
				}
				if err := c.WriteJSON(&js); err != nil {
					t.Fatal(err)
				}
				golden.Check(t, tc.name+".txt", text.Bytes())
				golden.Check(t, tc.name+".json", js.Bytes())
			})
		}
	})
}

// TestExportShowsSpec: every export carries the spec of each result.
func TestExportShowsSpec(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		storetest.SeedMixedSpecs(t, s)
		var b bytes.Buffer
		if err := Export(ctx, &b, s, "csv", store.Filter{}); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(&b).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		col := map[string]int{}
		for i, h := range recs[0] {
			col[h] = i
		}
		for _, r := range recs[1:] {
			if r[col["method"]] != "GET" || r[col["keepalive"]] != "true" || r[col["rate"]] != "0" || r[col["connections"]] != "10" {
				t.Errorf("csv row without its spec: %v", r)
			}
		}
		b.Reset()
		if err := Export(ctx, &b, s, "json", store.Filter{}); err != nil {
			t.Fatal(err)
		}
		var rows []struct{ Spec group.Spec }
		if err := json.Unmarshal(b.Bytes(), &rows); err != nil || len(rows) != 7 || rows[0].Spec.URL != "http://127.0.0.1:8080/mixed" || rows[0].Spec.Method != "GET" {
			t.Errorf("json rows %+v %v", rows, err)
		}
		b.Reset()
		if err := Export(ctx, &b, s, "benchfmt", store.Filter{}); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"method: GET\n", "keepalive: true\n", "rate: 0\n", "BenchmarkHTTP/127.0.0.1:8080_mixed/conns=10 "} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("benchfmt lacks %q", want)
			}
		}
	})
}

// TestCompareByProtocolAndTLSResumption: HTTP/1.1 against h2, and TLS
// resumption on against off, compare like any part of the spec: one
// table, a group each, and never pooled in a comparison by something else.
func TestCompareByProtocolAndTLSResumption(t *testing.T) {
	s := storetest.OpenSQLite(t)
	rng := rand.New(rand.NewPCG(5, 6))
	at := time.Date(2025, 3, 3, 9, 0, 0, 0, time.UTC)
	var batch []store.Incoming
	add := func(mod func(*wire.RunSpec), rps float64) {
		r := storetest.FakeResult(rng, "lab", "pi-1", map[string]string{"server": "nginx"}, at, rps, 900)
		r.Spec.URL = "https://127.0.0.1:8443/index.html"
		mod(&r.Spec)
		batch = append(batch, storetest.Incoming(t, r))
		at = at.Add(time.Minute)
	}
	for i := range 4 {
		jitter := float64(i) * 3
		add(func(*wire.RunSpec) {}, 9000+jitter)
		add(func(s *wire.RunSpec) { s.Protocol, s.Streams = "h2", 10 }, 15000+jitter)
		add(func(s *wire.RunSpec) { s.KeepAlive = false }, 700+jitter)
		add(func(s *wire.RunSpec) { s.KeepAlive, s.NoTLSResume = false, true }, 450+jitter)
	}
	if _, err := s.Ingest(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	table := func(c *Comparison, keys ...string) *Table {
		t.Helper()
		for i, tb := range c.Tables {
			var got []string
			for _, g := range tb.Groups {
				got = append(got, g.Key)
			}
			if slices.Equal(got, keys) {
				return &c.Tables[i]
			}
		}
		t.Fatalf("no table with the groups %q in %+v", keys, c.Tables)
		return nil
	}
	median := func(g Group) float64 { return g.Stats["rps"].Median }

	c, err := Runs(context.Background(), s, Options{By: "protocol", Base: "HTTP/1.x"})
	if err != nil {
		t.Fatal(err)
	}
	tb := table(c, "HTTP/1.x", "h2, 10 streams")
	if g := tb.Groups; g[0].N != 4 || g[1].N != 4 || median(g[0]) > 9010 || median(g[1]) < 15000 || tb.Spec.Protocol != "" {
		t.Errorf("by protocol: %+v", tb)
	}
	if d, ok := tb.Groups[1].Deltas["rps"]; !ok || d.Pct < 60 {
		t.Errorf("h2 against HTTP/1.1: %+v", tb.Groups[1].Deltas)
	}

	c, err = Runs(context.Background(), s, Options{By: "tls_resume", Base: "resumption on"})
	if err != nil {
		t.Fatal(err)
	}
	tb = table(c, "resumption on", "resumption off")
	if g := tb.Groups; g[0].N != 4 || g[1].N != 4 || median(g[0]) < 700 || median(g[1]) > 460 || *tb.Spec.KeepAlive {
		t.Errorf("by tls_resume: %+v", tb)
	}

	// By server, the four kinds of work are four tables of 4 runs.
	c, err = Runs(context.Background(), s, Options{By: "server"})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Tables) != 4 {
		t.Fatalf("by server: %d tables, want 4", len(c.Tables))
	}
	var b bytes.Buffer
	if err := c.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"h2, 10 streams", "no TLS resumption"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the text does not say %q:\n%s", want, b.String())
		}
	}
	for _, tb := range c.Tables {
		if len(tb.Groups) != 1 || tb.Groups[0].N != 4 {
			t.Errorf("table %s: %+v", tb.Spec, tb.Groups)
		}
	}
}

// TestCompareByLabelNamedLikeSystemField: agents labelled board=pi4 and
// board=pi5 on machines that report no board are two groups by board,
// not one unnamed one; the comparison says it is by the label, and
// sys.board and label.board pick one of them. The CSV's board column
// has the label.
func TestCompareByLabelNamedLikeSystemField(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		rng := rand.New(rand.NewPCG(7, 8))
		at := time.Date(2025, 3, 3, 9, 0, 0, 0, time.UTC)
		var batch []store.Incoming
		for i := range 6 {
			for _, b := range []string{"pi4", "pi5"} {
				r := storetest.FakeResult(rng, "lab", "dev-"+b, map[string]string{"board": b, "os": "bookworm-" + b}, at, 1000+float64(i), 800)
				r.Fingerprint.Board, r.Fingerprint.OS = "", "Debian GNU/Linux 12"
				batch = append(batch, storetest.Incoming(t, r))
				at = at.Add(time.Minute)
			}
		}
		if _, err := s.Ingest(ctx, batch); err != nil {
			t.Fatal(err)
		}
		for _, by := range []string{"board", "label.board", "os"} {
			c, err := Runs(ctx, s, Options{By: by, Base: map[string]string{"board": "pi5", "label.board": "pi5", "os": "bookworm-pi5"}[by]})
			if err != nil {
				t.Fatalf("by %s: %v", by, err)
			}
			g := c.Tables[0].Groups
			if len(g) != 2 || g[0].N != 6 || g[1].N != 6 || !strings.HasSuffix(g[0].Key, "pi4") || c.Tables[0].Base != g[1].Key {
				t.Errorf("by %s: groups %+v base %q", by, g, c.Tables[0].Base)
			}
			var b bytes.Buffer
			c.WriteText(&b)
			if by != "label.board" && !strings.Contains(b.String(), "sys."+by) {
				t.Errorf("by %s: the text does not say a label and a system field share the name:\n%s", by, b.String())
			}
		}
		c, err := Runs(ctx, s, Options{By: "sys.board"})
		if err != nil || len(c.Tables[0].Groups) != 1 || c.Tables[0].Groups[0].Key != "-" {
			t.Errorf("by sys.board: %+v %v", c, err)
		}
		c, err = Runs(ctx, s, Options{By: "sys.os"})
		if err != nil || len(c.Tables[0].Groups) != 1 || c.Tables[0].Groups[0].Key != "Debian GNU/Linux 12" {
			t.Errorf("by sys.os: %+v %v", c, err)
		}
		if _, err := Runs(ctx, s, Options{By: "sys.bogus"}); err == nil {
			t.Error("by sys.bogus: no error")
		}
		var out bytes.Buffer
		if err := Export(ctx, &out, s, "csv", store.Filter{}); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(&out).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		col := slices.Index(recs[0], "board")
		if col < 0 || len(recs) < 2 || (recs[1][col] != "pi4" && recs[1][col] != "pi5") {
			t.Errorf("CSV board column %d: %v", col, recs[:2])
		}
	})
}

// TestCompareTextSaysHowTheChangeIsComputed: the legend says the change is
// a ratio on logarithms, and when a tested figure has a 0 (errors of a
// group that had none) that its change is the shift, at least -100 %.
func TestCompareTextSaysHowTheChangeIsComputed(t *testing.T) {
	table := func(base, other []float64) *Comparison {
		return &Comparison{By: "server", Tested: []string{"errors"}, Tables: []Table{{Base: "a", Groups: []Group{
			{Key: "a", N: len(base), Stats: map[string]stats.GroupStats{"errors": stats.Describe(base)}},
			{Key: "b", N: len(other), Stats: map[string]stats.GroupStats{"errors": stats.Describe(other)},
				Deltas: map[string]stats.Delta{"errors": stats.Compare(base, other)}},
		}}}}
	}
	for _, tc := range []struct {
		base, other []float64
		shift       bool
		cell        string
	}{
		{[]float64{2, 4, 8, 16, 32}, []float64{1, 2, 4, 8, 16}, false, "~ [-93.75% +300.00%]"},
		{[]float64{0, 2, 4, 6, 8}, []float64{0, 0, 0, 0, 0}, true, "[-100.00% +0.00%]"},
	} {
		var b bytes.Buffer
		if err := table(tc.base, tc.other).WriteText(&b); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if !strings.Contains(out, "exp(Hodges-Lehmann shift of the logarithms) - 1") || !strings.Contains(out, tc.cell) ||
			strings.Contains(out, "has no logarithm") != tc.shift {
			t.Errorf("%v vs %v:\n%s", tc.base, tc.other, out)
		}
	}
}
