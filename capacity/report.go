package capacity

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Report is a search's result as --format json prints it and the wire
// carries it: the answer as capacity_rps, and every trial.
type Report struct {
	SLO          string        `json:"slo"`
	CapacityRPS  float64       `json:"capacity_rps"`
	AtLeast      bool          `json:"at_least"`
	LimitedBy    string        `json:"limited_by"`
	Confirmed    bool          `json:"confirmed"`
	NonMonotonic bool          `json:"non_monotonic"`
	UpperBound   float64       `json:"upper_bound_rps,omitempty"`
	Tolerance    float64       `json:"tolerance"`
	Answer       string        `json:"answer"`
	Seconds      float64       `json:"seconds"` // the trials' time, warm-ups included
	Trials       []TrialReport `json:"trials"`
}

// TrialReport is one trial's line.
type TrialReport struct {
	N            int      `json:"n"`
	Kind         string   `json:"kind"`
	OfferedRPS   float64  `json:"offered_rps"`
	AchievedRPS  float64  `json:"achieved_rps"`
	WarmupS      float64  `json:"warmup_s"`
	DurationS    float64  `json:"duration_s"`
	Requests     int64    `json:"requests"`
	Errors       int64    `json:"errors"`
	Timeouts     int64    `json:"timeouts"`
	P50US        int64    `json:"p50_us"`
	P90US        int64    `json:"p90_us"`
	P99US        int64    `json:"p99_us"`
	P999US       int64    `json:"p99_9_us"`
	MaxUS        int64    `json:"max_us"`
	Goodput      float64  `json:"goodput"`
	ServerCPU    *float64 `json:"server_cpu_pct,omitempty"`
	GeneratorCPU *float64 `json:"generator_cpu_pct,omitempty"`
	Pass         bool     `json:"pass"`
	GenLimited   bool     `json:"generator_limited,omitempty"`
	Reasons      []string `json:"reasons,omitempty"`
}

// TrialOf is a record's line.
func TrialOf(r Record) TrialReport {
	t := TrialReport{N: r.N, Kind: string(r.Kind), OfferedRPS: r.Rate, AchievedRPS: round1(r.Achieved),
		WarmupS: r.Warmup.Seconds(), DurationS: r.Duration.Seconds(),
		Requests: r.Requests, Errors: r.Failed, Timeouts: r.Timeouts,
		Goodput: r.Goodput, Pass: r.Pass, GenLimited: r.GeneratorLimited, Reasons: r.Reasons}
	if h := r.Latency; h != nil {
		t.P50US, t.P90US, t.P99US, t.P999US, t.MaxUS = h.Quantile(0.5), h.Quantile(0.9), h.Quantile(0.99), h.Quantile(0.999), h.Max()
	}
	if r.ServerCPU >= 0 {
		v := round1(r.ServerCPU)
		t.ServerCPU = &v
	}
	if r.GeneratorCPU >= 0 {
		v := round1(r.GeneratorCPU * 100)
		t.GeneratorCPU = &v
	}
	if r.GeneratorLimited {
		t.Reasons = append(t.Reasons, r.GeneratorReason)
	}
	return t
}

func round1(f float64) float64 { return float64(int64(f*10+0.5)) / 10 }

// Report is r as --format json prints it.
func (r Result) Report(cfg Config) Report {
	rep := Report{SLO: cfg.SLO.String(), CapacityRPS: r.Capacity, AtLeast: r.AtLeast, LimitedBy: string(r.Limit),
		Confirmed: r.Confirmed, NonMonotonic: r.NonMonotonic, UpperBound: r.UpperBound, Tolerance: cfg.Tolerance,
		Answer: r.Answer(), Trials: []TrialReport{}}
	var spent time.Duration
	for _, rec := range r.Records {
		rep.Trials = append(rep.Trials, TrialOf(rec))
		spent += rec.Warmup + rec.Duration
	}
	rep.Seconds = spent.Seconds()
	return rep
}

// TrialHeader is the header of the trials' lines.
const TrialHeader = "trial kind      offered  achieved      p50      p99   errors  server  gen  result"

// WriteTrial writes t as one line under TrialHeader.
func WriteTrial(w io.Writer, t TrialReport) {
	cpu := func(p *float64) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprintf("%.0f%%", *p)
	}
	res := "pass"
	switch {
	case t.GenLimited:
		res = "generator limited"
	case !t.Pass:
		res = "FAIL"
		if len(t.Reasons) > 0 {
			res += ": " + strings.Join(t.Reasons, "; ")
		}
	}
	errs := 0.0
	if t.Requests > 0 {
		errs = float64(t.Errors) / float64(t.Requests)
	}
	fmt.Fprintf(w, "%5d %-7s %9.0f %9.0f %8s %8s %8s %7s %4s  %s\n", t.N, t.Kind, t.OfferedRPS, t.AchievedRPS,
		us(t.P50US), us(t.P99US), pct(errs), cpu(t.ServerCPU), cpu(t.GeneratorCPU), res)
}

func us(v int64) string {
	d := time.Duration(v) * time.Microsecond
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/1e6)
	}
	return fmt.Sprintf("%dus", v)
}

// WriteAnswer writes the answer's lines after the trials.
func WriteAnswer(w io.Writer, rep Report) {
	fmt.Fprintf(w, "\nSLO %s, tolerance %.3g %%, %d trials in %s\n", rep.SLO, rep.Tolerance*100, len(rep.Trials), time.Duration(rep.Seconds*float64(time.Second)).Round(time.Second))
	fmt.Fprintf(w, "capacity: %s\n", rep.Answer)
}
