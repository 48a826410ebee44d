package web

import (
	"slices"

	"github.com/edgebench/edgebench/capacity"
	"github.com/edgebench/edgebench/wire"
)

// CapacityCharts draws a capacity search on its run page: the latency of
// each trial against the rate it offered, with the SLO's latency bounds
// as flat lines, and the rate each trial achieved against the rate it
// offered (a generator or server that fell short leaves the diagonal).
// Trials are in the order of their offered rate; a rate measured more
// than once has a point per trial. JSON strings for data-chart.
func CapacityCharts(c *wire.Capacity) []string {
	if c == nil || len(c.Trials) == 0 {
		return nil
	}
	trials := slices.Clone(c.Trials)
	slices.SortStableFunc(trials, func(a, b wire.CapacityTrial) int {
		switch {
		case a.OfferedRPS < b.OfferedRPS:
			return -1
		case a.OfferedRPS > b.OfferedRPS:
			return 1
		}
		return 0
	})
	x := make([]float64, len(trials))
	for i, t := range trials {
		x[i] = t.OfferedRPS
	}
	ms := func(name string, us func(wire.CapacityTrial) int64) seriesSpec {
		s := seriesSpec{Name: name}
		for _, t := range trials {
			if t.Requests == 0 { // nothing measured: a gap, not 0 ms
				s.Values = append(s.Values, nil)
				continue
			}
			s.Values = append(s.Values, fp(float64(us(t))/1000))
		}
		return s
	}
	lat := []seriesSpec{
		ms("p50", func(t wire.CapacityTrial) int64 { return t.P50US }),
		ms("p99", func(t wire.CapacityTrial) int64 { return t.P99US }),
	}
	// The SLO's latency bounds, each with its own percentile if the
	// chart has it not already.
	if slo, err := capacity.ParseSLO(c.SLO); err == nil {
		for _, cond := range slo {
			if !cond.Metric.Latency() {
				continue
			}
			switch cond.Metric {
			case capacity.P90:
				lat = append(lat, ms("p90", func(t wire.CapacityTrial) int64 { return t.P90US }))
			case capacity.P999:
				lat = append(lat, ms("p99.9", func(t wire.CapacityTrial) int64 { return t.P999US }))
			case capacity.Max:
				lat = append(lat, ms("max", func(t wire.CapacityTrial) int64 { return t.MaxUS }))
			}
			bound := seriesSpec{Name: "SLO " + cond.String()}
			for range trials {
				bound.Values = append(bound.Values, fp(float64(cond.Latency.Microseconds())/1000))
			}
			lat = append(lat, bound)
		}
	}
	achieved, offered := seriesSpec{Name: "achieved"}, seriesSpec{Name: "offered"}
	for _, t := range trials {
		achieved.Values = append(achieved.Values, fp(t.AchievedRPS))
		offered.Values = append(offered.Values, fp(t.OfferedRPS))
	}
	return []string{
		specJSON(lineSpec{Type: "line", Title: "Capacity search: latency against the offered rate", Unit: "ms", XUnit: "req/s offered", X: x, Series: lat}),
		specJSON(lineSpec{Type: "line", Title: "Capacity search: achieved against offered rate", Unit: "req/s", XUnit: "req/s offered", X: x, Series: []seriesSpec{achieved, offered}}),
	}
}
