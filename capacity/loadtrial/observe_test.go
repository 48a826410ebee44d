package loadtrial

import (
	"testing"
	"time"

	"github.com/edgebench/edgebench/capacity"
	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/measure"
	"github.com/edgebench/edgebench/probe/machine"
)

// A trial's Observation and its run's verdict come from the same figures
// and the same rule: the generator's CPU measured by rusage (the probe
// watches only the server) makes both say "generator", or neither.
func TestTrialAndRunVerdictAgree(t *testing.T) {
	run := func(rate float64, completed int64) measure.Run {
		h := report.NewLatencyHistogram()
		for range completed {
			h.Record(3000)
		}
		return measure.Run{
			Load: &report.LoadResult{Rate: rate, Connections: 16, Threads: 2, Duration: 2 * time.Second,
				Completed: completed, OK: completed, Latency: h},
			System: &machine.Report{Summary: machine.Summary{
				CPU:        &machine.CPUSummary{Idle: machine.Stat{Mean: 20}, User: machine.Stat{Mean: 80}},
				PerCPUBusy: []machine.CoreStat{{ID: 0, Stat: machine.Stat{Mean: 80}}, {ID: 1, Stat: machine.Stat{Mean: 80}}},
				Procs:      []machine.ProcSummary{{Name: "nginx", PID: 7, Count: 2, CPU: &machine.Stat{Mean: 40}}},
			}},
		}
	}
	slo := capacity.SLO{{Metric: capacity.Errors, Ratio: 0.01}}
	for _, c := range []struct {
		name    string
		run     measure.Run
		genCPU  float64
		bound   bool
		display float64
	}{
		// Delivered: the loops' CPU is their spin before each send.
		{"the rate delivered, the generator's loops busy", run(1000, 2000), 190, false, 0.95},
		{"the generator busy, the schedule behind", run(1000, 1600), 160, true, 0.8},
		{"the server short of the rate, the generator idle", run(1000, 1000), 20, false, 0.1},
		{"rusage unknown", run(1000, 1000), -1, false, -1},
	} {
		r := c.run
		o := observe(&r, "/", c.genCPU)
		if r.Verdict == nil {
			t.Fatalf("%s: no run verdict", c.name)
		}
		j := capacity.Judge(slo, o)
		if o.Generator.Bound != c.bound || r.Verdict.GeneratorBound() != c.bound || j.GeneratorLimited != c.bound {
			t.Errorf("%s: observation %v, trial %v, run verdict %s %q; want %v", c.name, o.Generator.Bound, j.GeneratorLimited, r.Verdict.LimitedBy, r.Verdict.Reasons, c.bound)
			continue
		}
		if c.bound && j.GeneratorReason != r.Verdict.Reasons[0] {
			t.Errorf("%s: trial %q, run verdict %q", c.name, j.GeneratorReason, r.Verdict.Reasons[0])
		}
		if delivered := o.Achieved >= capacity.Delivered*o.Offered; !c.bound && (j.Pass != delivered || delivered != (r.Verdict.LimitedBy == "rate")) {
			t.Errorf("%s: trial pass %v, run verdict %s", c.name, j.Pass, r.Verdict.Line())
		}
		if o.GeneratorCPU != c.display {
			t.Errorf("%s: generator CPU %v, want %v of its event loops", c.name, o.GeneratorCPU, c.display)
		}
	}
}

// -t above the cores: ten threads on two event loops use at most two
// cores, and the generator's share is of those (as the verdict weighs it).
func TestTrialGeneratorCPUAgainstItsLoops(t *testing.T) {
	r := measure.Run{Load: &report.LoadResult{Rate: 1000, Connections: 10, Threads: 10, Loops: 2, Duration: 2 * time.Second,
		Completed: 2000, OK: 2000, Latency: report.NewLatencyHistogram()}}
	if o := observe(&r, "/", 150); o.GeneratorCPU != 0.75 {
		t.Errorf("generator CPU %v of its loops, want 0.75 (150 %% of 2 loops, not of 10 threads)", o.GeneratorCPU)
	}
}

// A trial's server CPU is the server's as the verdict sums it: nginx and
// its upstream php-fpm, not edgebench (issue 28: the search's "server"
// column counted the first row but edgebench's).
func TestTrialServerCPUCountsTheUpstream(t *testing.T) {
	h := report.NewLatencyHistogram()
	for range 200 {
		h.Record(40_000)
	}
	cpu := func(v float64) *machine.Stat { return &machine.Stat{Mean: v, Max: v} }
	run := measure.Run{
		Load: &report.LoadResult{Rate: 100, Connections: 16, Threads: 2, Duration: 2 * time.Second, Completed: 200, OK: 200, Latency: h},
		System: &machine.Report{Summary: machine.Summary{
			CPU:        &machine.CPUSummary{Idle: machine.Stat{Mean: 30}, User: machine.Stat{Mean: 70}},
			PerCPUBusy: []machine.CoreStat{{ID: 0, Stat: machine.Stat{Mean: 70}}, {ID: 1, Stat: machine.Stat{Mean: 70}}},
			Procs: []machine.ProcSummary{{Name: "nginx", PID: 812, Role: machine.RoleServer, Count: 2, CPU: cpu(9)},
				{Name: "edgebench", PID: 4242, Role: machine.RoleGenerator, Count: 1, CPU: cpu(12)},
				{Name: "php-fpm8.2", PID: 790, Role: machine.RoleUpstream, Of: "nginx", Count: 5, CPU: cpu(117)}},
		}},
	}
	if o := observe(&run, "/", 12); o.ServerCPU != 126 {
		t.Errorf("server CPU %v, want nginx's 9 and php-fpm's 117", o.ServerCPU)
	}
}
