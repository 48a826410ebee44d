package capacity

import (
	"fmt"
	"time"

	"github.com/edgebench/edgebench/loadgen/report"
)

// Observation is what one trial measured over its window (the warm-up
// left out).
type Observation struct {
	Offered  float64 // the open-loop rate asked for, requests/s
	Achieved float64 // the requests that ended in the window, per second
	// Requests is every request that ended in the window: completed, or
	// failed without a response.
	Requests int64
	Failed   int64 // of Requests: failed in any way (status included)
	Timeouts int64 // of Failed: timed out
	// NotOK counts the completed responses that failed (a 5xx, say):
	// their latency is in Latency but they are not inside the objective.
	NotOK int64
	// Latency holds the completed requests' latencies in microseconds,
	// corrected for coordinated omission (from the scheduled start).
	Latency *report.Histogram
	// GeneratorCPU is the share of its event loops' time the generator
	// was busy, 0..1; negative when unknown.
	GeneratorCPU float64
	// ServerCPU is the watched server's CPU in percent of one core;
	// negative when unknown.
	ServerCPU float64
	// ScheduleLag is how far the open-loop schedule fell behind at the
	// window's end, when the generator knows it; 0 when unknown.
	ScheduleLag time.Duration
}

// FromLoad maps a load test's result onto an Observation: the drained
// requests that failed or were cut count as failures (an overloaded
// server leaves many in flight at the window's end).
func FromLoad(r *report.LoadResult) Observation {
	o := Observation{Offered: r.Rate, Latency: r.Latency, GeneratorCPU: -1, ServerCPU: -1}
	e := r.Errors
	// Status and length failures are complete responses; the others (a
	// whole-request timeout aside) ended without one.
	o.NotOK = r.Completed - r.OK
	o.Requests = r.Completed + e.Connect + e.Read + e.Write + e.TLS + e.Reset
	if !r.WholeRequestTimeout {
		o.Requests += e.Timeout
	}
	o.Failed = e.Total()
	o.Timeouts = e.Timeout
	d := r.Drained
	o.Requests += d.Errors.Total() + d.Cut
	o.Failed += d.Errors.Total() + d.Cut
	o.Timeouts += d.Errors.Timeout + d.Cut
	if r.Duration > 0 {
		// The requests of the window still in flight at its end were
		// sent on schedule: they count as delivered.
		o.Achieved = float64(o.Requests+d.Completed) / r.Duration.Seconds()
	}
	if o.Latency == nil {
		o.Latency = report.NewLatencyHistogram()
	}
	return o
}

// Judgement is a trial's outcome under an SLO.
type Judgement struct {
	Pass bool
	// Reasons are the conditions missed, each with its figure, such as
	// "p99: 97.3 % of requests within 50ms, want 99 %".
	Reasons []string
	// Goodput is the share of requests inside the tightest latency bound
	// of the SLO and not failed (without a latency bound: not failed).
	Goodput float64
	// GeneratorLimited: the generator, not the server, failed to deliver
	// the trial; Pass says nothing about the server then.
	GeneratorLimited bool
	GeneratorReason  string
}

// within counts the completed requests whose latency is at most d.
func within(h *report.Histogram, d time.Duration) int64 {
	bound := d.Microseconds()
	var n int64
	h.ForEach(func(v, c int64) {
		if v <= bound {
			n += c
		}
	})
	return n
}

// Judge judges o by the SLO. A latency condition is read as goodput: at
// least the metric's share of all the requests (failed ones included, as
// outside) ended successfully within the bound; so "p99<50ms" fails when
// 2 % of requests failed fast, which a percentile of the completed ones
// alone would not see. A ratio condition holds when the share is strictly
// below its bound.
func Judge(slo SLO, o Observation) Judgement {
	j := Judgement{Pass: true, Goodput: 1}
	if lim, why := GeneratorLimited(o); lim {
		j.GeneratorLimited, j.GeneratorReason = true, why
	}
	if o.Requests <= 0 {
		j.Pass = false
		j.Goodput = 0
		j.Reasons = append(j.Reasons, "no request ended in the window")
		return j
	}
	total := float64(o.Requests)
	if o.Offered > 0 && o.Achieved < Delivered*o.Offered && !j.GeneratorLimited {
		// Requests that were due and never ended are lost, as a frame
		// is in RFC 2544: a server that answers a third of the rate
		// without an error has not sustained it.
		j.Pass = false
		j.Reasons = append(j.Reasons, fmt.Sprintf("rate: %.0f of %.0f req/s served, want %s", o.Achieved, o.Offered, pct(Delivered)))
	}
	var tightest time.Duration
	for _, c := range slo {
		switch {
		case c.Metric.Latency():
			good := max(within(o.Latency, c.Latency)-o.NotOK, 0)
			share := float64(good) / total
			if share < c.Metric.Share() {
				j.Pass = false
				j.Reasons = append(j.Reasons, fmt.Sprintf("%s: %s of requests within %v, want %s", c.Metric, pct(share), c.Latency, pct(c.Metric.Share())))
			}
			if tightest == 0 || c.Latency < tightest {
				tightest = c.Latency
			}
		case c.Metric == Errors || c.Metric == Timeouts:
			n := o.Failed
			if c.Metric == Timeouts {
				n = o.Timeouts
			}
			if r := float64(n) / total; r >= c.Ratio {
				j.Pass = false
				j.Reasons = append(j.Reasons, fmt.Sprintf("%s: %s (%d of %d), want below %s", c.Metric, pct(r), n, o.Requests, pct(c.Ratio)))
			}
		}
	}
	if tightest > 0 {
		j.Goodput = float64(max(within(o.Latency, tightest)-o.NotOK, 0)) / total
	} else {
		j.Goodput = float64(o.Requests-o.Failed) / total
	}
	return j
}

func pct(f float64) string {
	switch p := f * 100; {
	case p == 0 || p >= 10:
		return fmt.Sprintf("%.1f %%", p)
	case p >= 0.1:
		return fmt.Sprintf("%.2f %%", p)
	default:
		return fmt.Sprintf("%.3g %%", p)
	}
}

// Thresholds of Judge and GeneratorLimited.
const (
	// Delivered: a trial passes only when at least this share of its
	// offered rate ended in the window (the rest is lost).
	Delivered = 0.95
	// ShortOfRate: a trial that achieved less than this share of its
	// offered rate fell short.
	ShortOfRate = 0.90
	// BusyGenerator: a generator busy this share of its event loops'
	// time had no room left.
	BusyGenerator = 0.90
)

// GeneratorLimited reports whether the load generator, not the server,
// failed to deliver the trial, with the figures that say so: it fell
// short of the offered rate while its event loops were busy (or, when the
// engine reports it, its schedule fell behind by more than a tenth of a
// second with no request failed). Every decision of the search about the
// generator is here, in one place.
func GeneratorLimited(o Observation) (bool, string) {
	if o.Offered <= 0 || o.Achieved >= ShortOfRate*o.Offered {
		return false, ""
	}
	switch {
	case o.GeneratorCPU >= BusyGenerator:
		return true, fmt.Sprintf("the generator reached %.0f of %.0f req/s with its event loops %.0f %% busy", o.Achieved, o.Offered, o.GeneratorCPU*100)
	case o.ScheduleLag > 100*time.Millisecond && o.Failed == 0:
		return true, fmt.Sprintf("the generator reached %.0f of %.0f req/s, its schedule %v behind, without a failed request", o.Achieved, o.Offered, o.ScheduleLag.Round(time.Millisecond))
	}
	return false, ""
}
