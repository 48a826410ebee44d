package figures_test

import (
	"math"
	"testing"

	"github.com/edgebench/edgebench/collector/figures"
	"github.com/edgebench/edgebench/collector/series"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/wire"
)

// TestCPUPerThousandRequestsUnit: a run of 2,000 req/s on cores 40 %
// idle and 10 % waiting on IO (the wire's basis points) was 50 % busy,
// and its series figure cpu_per_kreq is 25 (% CPU per 1,000 req/s); a run
// without requests has none.
func TestCPUPerThousandRequestsUnit(t *testing.T) {
	run := &wire.Run{DurationUS: 10_000_000, Completed: 20_000, System: &wire.System{Summary: wire.SysSummary{
		CPU: &wire.CPUWindow{User: wire.WindowStat{Mean: 4000}, System: wire.WindowStat{Mean: 1000},
			Idle: wire.WindowStat{Mean: 4000}, IOWait: wire.WindowStat{Mean: 1000}}}}}
	f := figures.Of(run, wire.Fingerprint{})
	if f.CPUPct != 50 || f.RPS != 2000 {
		t.Fatalf("CPU %v %%, %v req/s: want 50 %% and 2000 req/s", f.CPUPct, f.RPS)
	}
	if v := series.Value(&store.RunRow{RPS: f.RPS, CPUPct: f.CPUPct}, "cpu_per_kreq"); v != 25 {
		t.Errorf("cpu_per_kreq %v, want 25 (%% CPU per 1000 req/s)", v)
	}
	if v := series.Value(&store.RunRow{RPS: 0, CPUPct: 50}, "cpu_per_kreq"); !math.IsNaN(v) {
		t.Errorf("cpu_per_kreq of a run without requests %v, want none", v)
	}
}
