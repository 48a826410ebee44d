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
