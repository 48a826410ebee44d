package capacity

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Metric is what a Condition of the SLO bounds.
type Metric uint8

// The metrics of an SLO: latency quantiles (and the largest latency), and
// the shares of requests that failed or timed out.
const (
	P50 Metric = iota + 1
	P90
	P99
	P999
	Max
	Errors   // every failed request: connect, read, write, timeout, non-2xx/3xx status...
	Timeouts // the requests that timed out only
)

var metricNames = map[Metric]string{P50: "p50", P90: "p90", P99: "p99", P999: "p99.9", Max: "max", Errors: "errors", Timeouts: "timeouts"}

func (m Metric) String() string { return metricNames[m] }

// Latency reports whether m bounds latency (rather than a ratio).
func (m Metric) Latency() bool { return m >= P50 && m <= Max }

// Share is the part of the requests a latency condition asks to be within
// its bound: 0.5 for p50, 0.999 for p99.9, 1 for max.
func (m Metric) Share() float64 {
	switch m {
	case P50:
		return 0.5
	case P90:
		return 0.9
	case P99:
		return 0.99
	case P999:
		return 0.999
	}
	return 1
}

// Condition is one term of an SLO: "p99<50ms" or "errors<0.1%". A latency
// condition is met when at least Share of the requests (the failed ones
// counting as outside) ended within Latency: the goodput's reading of a
// percentile. A ratio condition is met when the share of failed (or timed
// out) requests is below Ratio.
type Condition struct {
	Metric  Metric
	Latency time.Duration // latency metrics: the bound
	Ratio   float64       // Errors, Timeouts: the bound, 0.001 for 0.1 %
}

func (c Condition) String() string {
	if c.Metric.Latency() {
		return c.Metric.String() + "<" + c.Latency.String()
	}
	return c.Metric.String() + "<" + strconv.FormatFloat(c.Ratio*100, 'g', -1, 64) + "%"
}

// SLO is the conditions a trial must meet, all of them.
type SLO []Condition

func (s SLO) String() string {
	parts := make([]string, len(s))
	for i, c := range s {
		parts[i] = c.String()
	}
	return strings.Join(parts, ",")
}

// ParseSLO reads conditions separated by commas, each METRIC<BOUND: a
// latency metric (p50, p90, p99, p99.9, max) with a duration (50ms, 1s,
// 200us), or errors or timeouts with a percentage (0.1%) or a fraction
// (0.001). Its errors are one line each, for the command line.
func ParseSLO(s string) (SLO, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("empty SLO: want conditions such as 'p99<50ms,errors<0.1%'")
	}
	var slo SLO
	seen := map[Metric]bool{}
	for _, term := range strings.Split(s, ",") {
		term = strings.TrimSpace(term)
		q := clip(term) // for the messages
		name, bound, ok := strings.Cut(term, "<")
		if !ok {
			return nil, fmt.Errorf("%q: want METRIC<BOUND, such as p99<50ms or errors<0.1%%", q)
		}
		name = strings.ToLower(strings.TrimSpace(name))
		bound = strings.TrimPrefix(strings.TrimSpace(bound), "=")
		var m Metric
		for k, v := range metricNames {
			if v == name {
				m = k
			}
		}
		switch name {
		case "p99.90":
			m = P999
		case "error", "errors_ratio", "error_ratio":
			m = Errors
		case "timeout", "timeout_ratio":
			m = Timeouts
		}
		if m == 0 {
			return nil, fmt.Errorf("%q: unknown metric %q: want p50, p90, p99, p99.9, max, errors or timeouts", q, clip(name))
		}
		if seen[m] {
			return nil, fmt.Errorf("%q: %s is bounded twice", q, m)
		}
		seen[m] = true
		c := Condition{Metric: m}
		if m.Latency() {
			d, err := time.ParseDuration(bound)
			if err != nil || d <= 0 {
				return nil, fmt.Errorf("%q: want a latency bound such as 50ms", q)
			}
			c.Latency = d
		} else {
			pct := strings.HasSuffix(bound, "%")
			v, err := strconv.ParseFloat(strings.TrimSuffix(bound, "%"), 64)
			if err != nil || math.IsNaN(v) || v <= 0 {
				return nil, fmt.Errorf("%q: want a ratio such as 0.1%% (above 0)", q)
			}
			if pct {
				v /= 100
			}
			if v > 1 {
				return nil, fmt.Errorf("%q: a ratio above 100%% bounds nothing", q)
			}
			c.Ratio = v
		}
		slo = append(slo, c)
	}
	return slo, nil
}

// ParseTolerance reads a capacity search's tolerance as edgebench
// capacity and the collector's trigger both take it: a percentage (5%)
// or a fraction (0.05), above 0 and below 100 %.
func ParseTolerance(s string) (float64, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(t, "%")), 64)
	if err != nil || math.IsNaN(v) {
		return 0, errors.New("want a share such as 5% or 0.05")
	}
	if pct {
		v /= 100
	}
	if !(v > 0 && v < 1) {
		return 0, errors.New("want between 0 and 100 % (5% or 0.05)")
	}
	return v, nil
}

// clip is a term as a message quotes it: at most 80 bytes of it.
func clip(s string) string {
	if len(s) <= 80 {
		return s
	}
	return s[:80] + "..."
}
