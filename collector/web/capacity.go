package web

import (
	"slices"

	"github.com/edgebench/edgebench/capacity"
	"github.com/edgebench/edgebench/wire"
)

// CapacityCharts draws a capacity search on its run page: the latency of
// each trial against the rate it offered, with the SLO's latency bounds
// as flat lines; the rate each trial achieved against the rate it
// offered (a generator or server that fell short leaves the diagonal),
// split into its goodput (successful responses per second) and its
// failed requests per second, so that a server answering half of the
// rate with 503s, which achieves the offered rate, shows half of it as
// goodput; and the failed requests in % of those that ended, with the
// SLO's bounds on errors and timeouts. Trials are in the order of their
// offered rate; a rate measured more than once has a point per trial; a
// trial in which no request ended is a gap. JSON strings for data-chart.
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
	// The achieved rate split by the share of the requests that failed:
	// goodput and failed add up to it.
	share := func(t wire.CapacityTrial, n int64) *float64 {
		if t.Requests <= 0 {
			return nil
		}
		return fp(t.AchievedRPS * float64(n) / float64(t.Requests))
	}
	offered, achieved := seriesSpec{Name: "offered"}, seriesSpec{Name: "achieved"}
	good, failed := seriesSpec{Name: "goodput"}, seriesSpec{Name: "failed"}
	for _, t := range trials {
		offered.Values = append(offered.Values, fp(t.OfferedRPS))
		achieved.Values = append(achieved.Values, fp(t.AchievedRPS))
		good.Values = append(good.Values, share(t, max(t.Requests-t.Errors, 0)))
		failed.Values = append(failed.Values, share(t, min(t.Errors, t.Requests)))
	}
	// The failed requests in %, and the SLO's bounds on them.
	ratio := func(name string, n func(wire.CapacityTrial) int64) seriesSpec {
		s := seriesSpec{Name: name}
		for _, t := range trials {
			if t.Requests <= 0 {
				s.Values = append(s.Values, nil)
				continue
			}
			s.Values = append(s.Values, fp(100*float64(min(n(t), t.Requests))/float64(t.Requests)))
		}
		return s
	}
	errs := []seriesSpec{ratio("errors", func(t wire.CapacityTrial) int64 { return t.Errors })}
	if slo, err := capacity.ParseSLO(c.SLO); err == nil {
		for _, cond := range slo {
			switch cond.Metric {
			case capacity.Timeouts:
				errs = append(errs, ratio("timeouts", func(t wire.CapacityTrial) int64 { return t.Timeouts }))
			case capacity.Errors:
			default:
				continue
			}
			bound := seriesSpec{Name: "SLO " + cond.String()}
			for range trials {
				bound.Values = append(bound.Values, fp(100*cond.Ratio))
			}
			errs = append(errs, bound)
		}
	}
	return []string{
		specJSON(lineSpec{Type: "line", Title: "Capacity search: latency against the offered rate", Unit: "ms", XUnit: "req/s offered", X: x, Series: lat}),
		specJSON(lineSpec{Type: "line", Title: "Capacity search: achieved rate = goodput + failed",
			Unit: "req/s", XUnit: "req/s offered", X: x, Series: []seriesSpec{offered, achieved, good, failed}}),
		specJSON(lineSpec{Type: "line", Title: "Capacity search: failed requests, % of those that ended", Unit: "%", XUnit: "req/s offered", X: x, Series: errs}),
	}
}
