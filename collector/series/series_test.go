package series

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/group"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/seriesdb"
	"github.com/edgebench/edgebench/collector/store/storetest"
)

// TestChangesInTheStore: a device whose server got 15 % slower after a
// kernel update, another with one bad run: one change of req/s (and of
// CPU per request, as the CPU stayed busy for fewer requests) on the
// first, with what else changed, stored once its window was full; none
// on the second. The whole-series detection finds the same.
func TestChangesInTheStore(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		rng := rand.New(rand.NewPCG(7, 8))
		at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		var batch []store.Incoming
		for i := range 30 {
			labels := map[string]string{"server": "nginx"}
			if i%2 == 0 {
				labels[group.ScheduleLabel] = "nightly" // the same series
			}
			rps := 1000 * (1 + 0.02*rng.NormFloat64())
			if i >= 14 {
				rps *= 0.85
			}
			r := storetest.FakeResult(rng, "lab", "pi-1", labels, at, rps, 800)
			if i >= 14 {
				r.Fingerprint.Kernel = "6.6.31-rpi"
			}
			r.Fingerprint.Throttled = i == 16
			batch = append(batch, storetest.Incoming(t, r))
			rps2 := 700 * (1 + 0.02*rng.NormFloat64())
			if i == 10 {
				rps2 = 350
			}
			batch = append(batch, storetest.Incoming(t, storetest.FakeResult(rng, "lab", "pi-2", map[string]string{"server": "nginx"}, at.Add(time.Second), rps2, 900)))
			at = at.Add(24 * time.Hour)
		}
		for len(batch) > 0 { // a day at a time
			if _, err := s.Ingest(ctx, batch[:2]); err != nil {
				t.Fatal(err)
			}
			batch = batch[2:]
		}
		cs, next, err := s.ListChanges(ctx, seriesdb.ChangeQuery{})
		if err != nil || next != "" {
			t.Fatal(err, next)
		}
		slices.Reverse(cs) // oldest first, as Changes
		var metrics []string
		for _, c := range cs {
			t.Logf("%s %s %s %.1f -> %.1f %+.1f%% [%+.1f %+.1f] p=%.4f %d|%d also %v", c.Series, c.Metric, c.At.Format(time.DateOnly),
				c.Before, c.After, c.Pct, c.LowPct, c.HighPct, c.P, len(c.BeforeIDs), len(c.AfterIDs), c.Also)
			metrics = append(metrics, c.Metric)
			if c.Device != "pi-1" || !c.At.Equal(time.Date(2026, 11, 15, 0, 0, 0, 0, time.UTC)) {
				t.Errorf("a change of %s on %s at %s, want pi-1 at 2026-11-15", c.Metric, c.Device, c.At)
			}
			if !slices.Contains(c.Also, "kernel 6.1.0-rpi7 -> 6.6.31-rpi") || !slices.Contains(c.Also, "throttled in 0 of 14 results before, 1 of 8 after") {
				t.Errorf("also changed: %q", c.Also)
			}
			if len(c.BeforeIDs) != 14 || len(c.AfterIDs) != 8 || c.AfterIDs[0] != c.ResultID || !c.Worse() || c.Provisional || c.Seq == 0 {
				t.Errorf("sides %d and %d results, first after %s (result %s), worse %v, %+v", len(c.BeforeIDs), len(c.AfterIDs), c.AfterIDs[0], c.ResultID, c.Worse(), c)
			}
			if c.Series != "lab/pi-1 · GET http://127.0.0.1:8080/ · 10 connections · keep-alive · server=nginx" || c.Labels["server"] != "nginx" || len(c.Labels) != 1 {
				t.Errorf("series %q labels %v", c.Series, c.Labels)
			}
		}
		slices.Sort(metrics)
		if !slices.Equal(metrics, []string{"cpu_per_kreq", "rps"}) {
			t.Fatalf("changes of %v, want rps and cpu_per_kreq", metrics)
		}
		for _, c := range cs {
			if c.Metric == "rps" && (math.Abs(c.Pct+15) > 3 || c.LowPct > c.Pct || c.HighPct < c.Pct || c.HighPct >= 0) {
				t.Errorf("rps %+.1f%% [%+.1f %+.1f], want about -15 %%", c.Pct, c.LowPct, c.HighPct)
			}
		}
		whole, err := Changes(ctx, s, Options{})
		if err != nil || len(whole) != 2 || whole[0].ResultID != cs[0].ResultID || whole[0].Pct != cs[0].Pct && whole[0].Pct != cs[1].Pct {
			t.Errorf("the whole series: %+v %v", whole, err)
		}
		if cs, _, err := s.ListChanges(ctx, seriesdb.ChangeQuery{Since: time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC)}); err != nil || len(cs) != 0 {
			t.Errorf("since the day after: %v %v", cs, err)
		}
		if cs, _, err := s.ListChanges(ctx, seriesdb.ChangeQuery{Device: "pi-2"}); err != nil || len(cs) != 0 {
			t.Errorf("pi-2's: %v %v", cs, err)
		}
	})
}

// TestChangeJSON: a change without an interval (too few results for one)
// is written with null bounds, not refused for its NaN, and read back.
func TestChangeJSON(t *testing.T) {
	c := Change{Metric: "rps", Pct: -10, LowPct: math.NaN(), HighPct: math.NaN(), Before: 1000, After: 900}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back Change
	if err := json.Unmarshal(b, &back); err != nil || back.Metric != "rps" || back.Pct != -10 || !math.IsNaN(back.LowPct) || !strings.Contains(string(b), `"low_pct":null`) {
		t.Fatalf("%s -> %+v %v", b, back, err)
	}
	c.LowPct, c.HighPct = -12, -8
	b, _ = json.Marshal(c)
	if err := json.Unmarshal(b, &back); err != nil || back.LowPct != -12 || back.HighPct != -8 {
		t.Fatalf("%s -> %+v %v", b, back, err)
	}
}
