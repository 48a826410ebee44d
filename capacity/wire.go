package capacity

import (
	"math"

	"github.com/edgebench/edgebench/wire"
)

// Wire is the report as a result carries it (wire.Result.Capacity).
func (r Report) Wire() *wire.Capacity {
	w := &wire.Capacity{SLO: r.SLO, CapacityRPS: r.CapacityRPS, AtLeast: r.AtLeast, LimitedBy: r.LimitedBy,
		Confirmed: r.Confirmed, NonMonotonic: r.NonMonotonic, UpperBoundRPS: r.UpperBound, Tolerance: r.Tolerance,
		Answer: r.Answer, Trials: []wire.CapacityTrial{}}
	bp := func(p *float64) *int32 {
		if p == nil {
			return nil
		}
		v := int32(math.Round(*p * 100))
		return &v
	}
	for _, t := range r.Trials {
		w.Trials = append(w.Trials, wire.CapacityTrial{Kind: t.Kind, OfferedRPS: t.OfferedRPS, AchievedRPS: t.AchievedRPS,
			WarmupMS: int64(t.WarmupS * 1000), DurationMS: int64(t.DurationS * 1000), Requests: t.Requests, Errors: t.Errors,
			Timeouts: t.Timeouts, P50US: t.P50US, P90US: t.P90US, P99US: t.P99US, P999US: t.P999US, MaxUS: t.MaxUS,
			GoodputBP: int32(math.Round(t.Goodput * 10000)), ServerCPUBP: bp(t.ServerCPU), GenCPUBP: bp(t.GeneratorCPU),
			Pass: t.Pass, GenLimited: t.GenLimited, Reasons: t.Reasons})
	}
	return w
}

// ReportOf is the report a result carries, as the device printed it.
func ReportOf(w *wire.Capacity) Report {
	r := Report{SLO: w.SLO, CapacityRPS: w.CapacityRPS, AtLeast: w.AtLeast, LimitedBy: w.LimitedBy, Confirmed: w.Confirmed,
		NonMonotonic: w.NonMonotonic, UpperBound: w.UpperBoundRPS, Tolerance: w.Tolerance, Answer: w.Answer, Trials: []TrialReport{}}
	pct := func(bp *int32) *float64 {
		if bp == nil {
			return nil
		}
		v := float64(*bp) / 100
		return &v
	}
	var ms int64
	for i, t := range w.Trials {
		r.Trials = append(r.Trials, TrialReport{N: i + 1, Kind: t.Kind, OfferedRPS: t.OfferedRPS, AchievedRPS: t.AchievedRPS,
			WarmupS: float64(t.WarmupMS) / 1000, DurationS: float64(t.DurationMS) / 1000, Requests: t.Requests, Errors: t.Errors,
			Timeouts: t.Timeouts, P50US: t.P50US, P90US: t.P90US, P99US: t.P99US, P999US: t.P999US, MaxUS: t.MaxUS,
			Goodput: float64(t.GoodputBP) / 10000, ServerCPU: pct(t.ServerCPUBP), GeneratorCPU: pct(t.GenCPUBP),
			Pass: t.Pass, GenLimited: t.GenLimited, Reasons: t.Reasons})
		ms += t.WarmupMS + t.DurationMS
	}
	r.Seconds = float64(ms) / 1000
	return r
}
