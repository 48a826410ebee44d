package compare

import (
	"bytes"
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/wire"
)

// Capacity results compare like any other figure: the answer of each
// device's searches, in a table of their own (a capacity search's spec),
// with the difference between devices tested; load tests' tables do not
// grow a capacity column.
func TestCompareCapacity(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		storetest.SeedCompare(t, s)
		rng := rand.New(rand.NewPCG(3, 4))
		at := time.Date(2025, 3, 2, 12, 0, 0, 0, time.UTC)
		var batch []store.Incoming
		for i := range 5 {
			for dev, capRPS := range map[string]float64{"pi-1": 480, "pi-2": 960} {
				r := storetest.FakeResult(rng, "lab", dev, map[string]string{"server": "nginx"}, at, capRPS, 800)
				r.Kind, r.Spec.Mode, r.Spec.Rate = wire.KindCapacity, "capacity", 0
				r.Capacity = &wire.Capacity{SLO: "p99<50ms", CapacityRPS: capRPS + float64(i), LimitedBy: "slo", Tolerance: 0.05,
					Confirmed: true, Trials: []wire.CapacityTrial{{Kind: "final", OfferedRPS: capRPS, AchievedRPS: capRPS, DurationMS: 15000, Pass: true}}}
				batch = append(batch, storetest.Incoming(t, r))
				at = at.Add(time.Minute)
			}
		}
		if _, err := s.Ingest(ctx, batch); err != nil {
			t.Fatal(err)
		}
		c, err := Runs(ctx, s, Options{By: "device", Metrics: []string{"capacity"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Tables) != 2 {
			t.Fatalf("%d tables: want the load tests' and the capacity searches'", len(c.Tables))
		}
		var capT *Table
		for i := range c.Tables {
			if c.Tables[i].Spec.Mode == "capacity" {
				capT = &c.Tables[i]
			}
		}
		if capT == nil || len(capT.Groups) != 2 {
			t.Fatalf("%+v", c.Tables)
		}
		if m := capT.Groups[0].Stats["capacity"]; m.N != 5 || m.Median != 482 {
			t.Errorf("pi-1 capacity %+v", m)
		}
		if d := capT.Groups[1].Deltas["capacity"]; !d.Significant || d.Pct < 95 || d.Pct > 105 {
			t.Errorf("pi-2 against pi-1: %+v", d)
		}
		var out bytes.Buffer
		if err := c.WriteText(&out); err != nil {
			t.Fatal(err)
		}
		text := out.String()
		t.Log("\n" + text)
		// The load tests' table has no capacity column and no
		// difference of it; the capacity searches' has both.
		loadT, capText, _ := strings.Cut(strings.SplitN(text, "spec 1 of 2: ", 2)[1], "spec 2 of 2: ")
		if strings.Contains(loadT, "capacity") || strings.Contains(text, "no runs") {
			t.Errorf("the load tests' table speaks of capacity:\n%s", loadT)
		}
		if !strings.Contains(capText, "capacity\n") || !strings.Contains(capText, "vs lab/pi-1  capacity") {
			t.Errorf("the capacity table:\n%s", capText)
		}
		if !strings.Contains(text, "edgebench capacity") {
			t.Errorf("no capacity table in\n%s", text)
		}
	})
}
