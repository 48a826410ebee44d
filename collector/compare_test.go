package collector

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"math"
	"regexp"
	"strings"
	"testing"
)

func TestCompareByServer(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	seedCompare(t, s)
	c, err := s.Compare(ctx, CompareOptions{By: "server", Metrics: []string{"rps", "p50", "cpu"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Groups) != 2 || c.Base != "nginx" || c.Groups[1].Key != "kangle" || c.Groups[0].N != 10 {
		t.Fatalf("groups %+v", c.Groups)
	}
	k := c.Groups[1]
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
	for _, want := range []string{"server", "req/s", "p99", "timeouts", "CPU %", "IO KB/s", "mem MB", "nginx", "kangle", "vs nginx", " ~ "} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if !regexp.MustCompile(`kangle\s+\+\d+\.\d\d% \[`).MatchString(text) {
		t.Errorf("no significant req/s delta for kangle in\n%s", text)
	}

	c, err = s.Compare(ctx, CompareOptions{By: "device"})
	if err != nil {
		t.Fatal(err)
	}
	// pi-2 is pi-1 again with different noise: mixed servers make both
	// groups bimodal alike.
	if d := c.Groups[1].Deltas["rps"]; d.Significant {
		t.Errorf("device delta significant: %v", d)
	}
	if _, err := s.Compare(ctx, CompareOptions{By: "server", Metrics: []string{"bogus"}}); err == nil {
		t.Error("unknown metric accepted")
	}
	if _, err := s.Compare(ctx, CompareOptions{By: "server", Base: "caddy"}); err == nil {
		t.Error("missing base group accepted")
	}
	c, err = s.Compare(ctx, CompareOptions{By: "server", Base: "kangle"})
	if err != nil || c.Base != "kangle" || c.Groups[0].Deltas["rps"].Pct > -10 {
		t.Errorf("base kangle: %+v %v", c, err)
	}
}

func TestCompareExcludeThrottled(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	seedCompare(t, s)
	c, err := s.Compare(ctx, CompareOptions{By: "server", Filter: Filter{ExcludeThrottled: true}})
	if err != nil || len(c.Groups) != 2 {
		t.Fatal(c, err)
	}
	c2, err := s.Compare(ctx, CompareOptions{By: "nope"})
	if err != nil || len(c2.Groups) != 1 || c2.Groups[0].Key != "-" {
		t.Fatalf("missing label: %+v %v", c2, err)
	}
	empty, err := s.Compare(ctx, CompareOptions{By: "server", Filter: Filter{Fleet: "none"}})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := empty.WriteText(&out); err != nil || !strings.Contains(out.String(), "no succeeded runs") {
		t.Errorf("empty: %q %v", out.String(), err)
	}
}

// benchLine is the Go benchmark format's result line.
var benchLine = regexp.MustCompile(`^Benchmark[^\s]+ \d+( [0-9.e+-]+ [^\s]+)+$`)

func TestExport(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	seedCompare(t, s)

	var b bytes.Buffer
	if err := s.Export(ctx, &b, "benchfmt", Filter{}); err != nil {
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
	if err := s.Export(ctx, &b, "csv", Filter{Device: "pi-1"}); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(recs) != 11 || recs[0][0] != "id" {
		t.Fatalf("csv: %d records %v", len(recs), err)
	}

	b.Reset()
	if err := s.Export(ctx, &b, "json", Filter{}); err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(b.Bytes(), &rows); err != nil || len(rows) != 20 || rows[0]["rps"] == nil {
		t.Fatalf("json: %d rows %v", len(rows), err)
	}
	if err := s.Export(ctx, &b, "xml", Filter{}); err == nil {
		t.Error("xml accepted")
	}
}

// TestCompareJSON: the JSON form carries the groups, their figures and
// the deltas; an interval too small to exist is null, not an error.
func TestCompareJSON(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	seedCompare(t, s)
	c, err := s.Compare(ctx, CompareOptions{By: "server", Metrics: []string{"rps", "cpu"}})
	if err != nil {
		t.Fatal(err)
	}
	// Groups of one run each: the delta has no interval (NaN).
	one := &Comparison{By: "server", Base: "a", Tested: []string{"rps"}, Groups: []Group{
		{Key: "a", N: 1, Stats: map[string]Summary{"rps": Summarize([]float64{100})}},
		{Key: "b", N: 1, Stats: map[string]Summary{"rps": Summarize([]float64{120})},
			Deltas: map[string]Delta{"rps": Compare([]float64{100}, []float64{120})}},
	}}
	nan := 0
	for _, g := range one.Groups {
		for _, d := range g.Deltas {
			if math.IsNaN(d.LowPct) {
				nan++
			}
		}
	}
	if nan == 0 {
		t.Fatalf("the small comparison has no interval left out: %+v", one.Groups)
	}
	for _, cmp := range []*Comparison{c, one} {
		var b bytes.Buffer
		if err := cmp.WriteJSON(&b); err != nil {
			t.Fatalf("WriteJSON: %v", err)
		}
		var got struct {
			Base   string `json:"base"`
			Groups []struct {
				Key    string                               `json:"key"`
				N      int                                  `json:"n"`
				Stats  map[string]struct{ Median *float64 } `json:"stats"`
				Deltas map[string]struct {
					Pct         *float64 `json:"pct"`
					Low         *float64 `json:"pct_ci95_low"`
					Significant bool     `json:"significant"`
				} `json:"deltas"`
			} `json:"groups"`
		}
		if err := json.Unmarshal(b.Bytes(), &got); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, b.String())
		}
		if len(got.Groups) != len(cmp.Groups) || got.Base != cmp.Base {
			t.Fatalf("JSON groups %d base %q, want %d %q", len(got.Groups), got.Base, len(cmp.Groups), cmp.Base)
		}
		for i, g := range cmp.Groups {
			for k, d := range g.Deltas {
				jd := got.Groups[i].Deltas[k]
				if jd.Significant != d.Significant || (jd.Pct == nil) != math.IsNaN(d.Pct) || (jd.Low == nil) != math.IsNaN(d.LowPct) {
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
}
