package storetest

import (
	"math"
	"time"

	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/wire"
)

// Point is what LightResult makes a result of: its start, the figures of
// its one run (req/s, p99 in µs, the device's CPU busy %; 0: no latency
// or no CPU figure), and the run's verdict (nil: none).
type Point struct {
	At      time.Time
	RPS     float64
	P99US   int64
	CPUPct  float64
	Verdict *wire.Verdict
}

// LightResult builds a succeeded result of one run per point, small and
// quick to make (a few latency records, a CPU summary only), whose
// figures are the points': req/s to 0.1, p99 to the histogram's
// precision, CPU to 0.01 %.
func LightResult(fleet, device string, labels map[string]string, pts ...Point) *wire.Result {
	r := &wire.Result{V: wire.SchemaVersion, ID: wire.NewID(), Fleet: fleet, Device: device, CreatedAt: pts[0].At, Kind: wire.KindLoadTest,
		Outcome: wire.StateSucceeded, Labels: labels,
		Spec:        wire.RunSpec{URL: "http://127.0.0.1:8080/", Method: "GET", Connections: 10, DurationMS: 10000, KeepAlive: true},
		Fingerprint: wire.Fingerprint{Board: "Raspberry Pi 4 Model B Rev 1.4", Kernel: "6.1.0-rpi7", Arch: "aarch64", Cores: 4, Server: "nginx/1.22.1"}}
	for _, p := range pts {
		n := int64(math.Round(p.RPS * 10))
		run := wire.Run{StartedAt: p.At, DurationUS: 10_000_000, Completed: n, OK: n, Server: "nginx/1.22.1", Verdict: p.Verdict}
		if p.P99US > 0 {
			h := report.NewLatencyHistogram()
			for i := range 100 {
				v := p.P99US / 2
				if i >= 98 {
					v = p.P99US
				}
				h.Record(v)
			}
			run.Latency = h.AppendCompact(nil)
		}
		if p.CPUPct > 0 {
			idle := 10000 - int64(p.CPUPct*100)
			run.System = &wire.System{IntervalMS: 1000, Summary: wire.SysSummary{Seconds: 10, Samples: 10,
				CPU: &wire.CPUWindow{Idle: wire.WindowStat{Mean: idle}, User: wire.WindowStat{Mean: 10000 - idle}}}}
		}
		r.Runs = append(r.Runs, run)
	}
	return r
}
