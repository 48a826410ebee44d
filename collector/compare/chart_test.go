package compare_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/edgebench/edgebench/collector/compare"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/collector/web"
)

// TestCompareShowsWhatItSays: a group's cell is its median with the
// interval of the median (±∞ below MedianCIRuns runs), a count is the
// total of the runs, and the chart's bar is the same figure.
func TestCompareShowsWhatItSays(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		s := e.Open(t)
		storetest.SeedMixedSpecs(t, s)
		c, err := compare.Runs(context.Background(), s, compare.Options{By: "server"})
		if err != nil {
			t.Fatal(err)
		}
		mixed := c.Tables[1].Groups[0]
		if st := mixed.Stats["timeouts"]; st.Sum != 99 {
			t.Errorf("timeouts %+v", st)
		}
		rps, _ := compare.MetricByName("rps")
		nginx := c.Tables[0].Groups[0]
		if text, inf := compare.Cell(rps, nginx.Stats["rps"]); !inf || !strings.HasSuffix(text, " ±∞") {
			t.Errorf("3 runs: %q", text)
		}
		chart := web.CompareChart(c.By, c.Tables[0], rps)
		if b := chart.Bars[0]; *b.Value != math.Round(nginx.Stats["rps"].Median*1000)/1000 || b.Lo != nil || b.Hi != nil {
			t.Errorf("nginx bar %+v, median %v", b, nginx.Stats["rps"].Median)
		}
		timeouts, _ := compare.MetricByName("timeouts")
		if b := web.CompareChart(c.By, c.Tables[1], timeouts).Bars[0]; *b.Value != 99 {
			t.Errorf("timeouts bar %+v", b)
		}

		// Ten runs each: every bar has an interval, the median's, within the
		// values: positive, around the bar.
		s = e.Open(t)
		storetest.SeedCompare(t, s)
		c, err = compare.Runs(context.Background(), s, compare.Options{By: "server"})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range c.Tables[0].Shown() { // no capacity in load tests
			for _, b := range web.CompareChart(c.By, c.Tables[0], m).Bars {
				if m.Count {
					continue
				}
				if b.Lo == nil || b.Hi == nil || *b.Lo <= 0 || *b.Lo > *b.Value || *b.Hi < *b.Value {
					t.Errorf("%s %s: bar %v [%v %v]", m.Name, b.Label, *b.Value, b.Lo, b.Hi)
				}
			}
		}
	})
}
