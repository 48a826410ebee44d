package capacity

import (
	"fmt"
	"time"

	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/verdict"
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
	// Generator is the run verdict's judgement of the load generator over
	// the trial (verdict.GeneratorBound; FromRun sets it): the caller
	// measures, the verdict's rule decides, the search follows.
	Generator GeneratorVerdict
}

// GeneratorVerdict is what the verdict's rule said of the load generator
// over a trial.
type GeneratorVerdict struct {
	Bound  bool   // the generator, not the server, limited the trial
	Reason string // with its figures, as the run's verdict states it
}

// FromRun maps a trial's measured run onto an Observation: its load
// test's figures (FromLoad), and the verdict's rule on the generator over
// the same figures (verdict.GeneratorBound), so that a trial the search
// calls generator-limited is one whose run verdict says "limited by
// generator", and the reverse.
func FromRun(in verdict.Input) Observation {
	o := FromLoad(in.Load)
	o.Generator.Bound, o.Generator.Reason = verdict.GeneratorBound(in)
	return o
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
	// GeneratorLimited: the generator, not the server, limited the trial
	// (Observation.Generator, the verdict's rule); Pass says nothing about
	// the server then.
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
	if o.Generator.Bound {
		j.GeneratorLimited, j.GeneratorReason = true, o.Generator.Reason
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

// Delivered: a trial passes only when at least this share of its
// offered rate ended in the window (the rest is lost). Whether the
// generator could deliver it is the verdict's rule (Observation.Generator).
const Delivered = 0.95
