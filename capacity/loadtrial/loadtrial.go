// Package loadtrial runs a capacity search's trials with loadgen's
// open-loop engine, the probe watching the server when asked: the socket
// and clock side of package capacity, shared by edgebench capacity and
// the agent.
package loadtrial

import (
	"cmp"
	"context"
	"errors"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/edgebench/edgebench/capacity"
	"github.com/edgebench/edgebench/loadgen"
	"github.com/edgebench/edgebench/measure"
	"github.com/edgebench/edgebench/probe"
	"github.com/edgebench/edgebench/verdict"
)

// Runner runs trials of one load test.
type Runner struct {
	// Load is the load test of every trial; its Rate, Duration, Warmup
	// and Requests are the trial's.
	Load loadgen.Config
	// Watches are processes of the server (--watch), whose CPU each
	// trial reports with what listens on the target's port and its
	// upstreams (probe.RunWatches).
	Watches   []probe.Watch
	ProbeRoot string
	// Progress, when set, gives a trial's progress callback.
	Progress func(capacity.Trial) func(loadgen.Progress)
	// Measured, when set, is given each trial's load test and recording.
	Measured func(capacity.Trial, measure.Run)
	// Window, when set, is called when a trial's measured window starts
	// (start true) and ends, from the load generator's goroutine: it must
	// not block.
	Window func(t capacity.Trial, start bool)
}

// Threads is the event loops a trial runs: Load.Threads, or one per CPU
// but no more than the connections.
func (r Runner) Threads() int {
	if r.Load.Threads > 0 {
		return r.Load.Threads
	}
	return max(min(runtime.NumCPU(), max(r.Load.Connections, 1)), 1)
}

// cpuTime is the process's user and system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Run runs trial t and returns what it observed: the load test's figures,
// the generator's CPU (this process's over the trial, against its event
// loops) and the server's, as the verdict sums it (verdict.ServerCPU).
func (r Runner) Run(ctx context.Context, t capacity.Trial) (capacity.Observation, error) {
	cfg := r.Load
	cfg.Rate, cfg.Duration, cfg.Warmup, cfg.Requests = t.Rate, t.Duration, t.Warmup, 0
	cfg.Threads = r.Threads()
	if r.Progress != nil {
		cfg.Progress = r.Progress(t)
	}
	cpu0, wall0 := cpuTime(), time.Now()
	// The probe always records the machine: the verdict's generator rule
	// needs its cores' figures (a generator starved on its pinned cores
	// reads as an idle one, one that shares them with other processes as
	// a server that falls short), and it watches edgebench, whatever
	// listens on the target's port with its upstreams, and Watches.
	test := measure.Test{Load: cfg, Watches: r.Watches, ProbeRoot: r.ProbeRoot, Interval: 500 * time.Millisecond}
	if r.Window != nil {
		test.Window = func(_ int, start bool) { r.Window(t, start) }
	}
	runs, err := measure.Repeat(ctx, test)
	cpu1, wall := cpuTime(), time.Since(wall0)
	if len(runs) == 0 {
		if err == nil {
			err = errors.New("the trial measured nothing")
		}
		return capacity.Observation{}, err
	}
	run := runs[0]
	genCPU := -1.0
	if cpu0 >= 0 && cpu1 >= 0 && wall > 0 {
		genCPU = 100 * float64(cpu1-cpu0) / float64(wall)
	}
	o := observe(&run, r.ProbeRoot, genCPU)
	if r.Measured != nil {
		r.Measured(t, run)
	}
	if run.Load.Interrupted {
		return capacity.Observation{}, context.Canceled
	}
	return o, nil
}

// observe is a trial's Observation and its run's verdict from the same
// figures: the run's, with the generator's CPU measured here by rusage
// (genCPU, % of one core; negative: unknown), which the probe does not
// watch. The verdict's rule on the generator decides both the run's
// verdict (run.Verdict, replaced) and whether the search takes the trial
// as the generator's (Observation.Generator): they cannot disagree.
func observe(run *measure.Run, root string, genCPU float64) capacity.Observation {
	in := measure.VerdictInput(*run, root)
	if genCPU > 0 {
		in.GeneratorCPU = genCPU
	}
	v := verdict.Judge(in)
	run.Verdict = &v
	o := capacity.FromRun(in)
	if cpu, ok := verdict.ServerCPU(in); ok {
		o.ServerCPU = cpu
	}
	// Against the loops that ran: -t above the cores shares them.
	if loops := cmp.Or(run.Load.Loops, run.Load.Threads); genCPU >= 0 && loops > 0 {
		o.GeneratorCPU = min(genCPU/100/float64(loops), 1)
	}
	return o
}

// ErrDeadTarget ends a search whose first trial had no successful
// response.
var ErrDeadTarget = errors.New("no successful response")

// StopIfDead is r's Run for a search that stops on a dead target: a
// first trial without one successful response (nothing listening, a
// wrong URL, every answer a 404) is not a rate too high, so the search
// ends there with ErrDeadTarget, the reason in *why, rather than ramping
// down to its lowest rate against it. The first trial is still observed.
func StopIfDead(r Runner, why *string) func(context.Context, capacity.Trial) (capacity.Observation, error) {
	first, measured := true, r.Measured
	r.Measured = func(t capacity.Trial, run measure.Run) {
		if first && run.Load.AllOK() == 0 {
			where := "in the first trial, at " + strconv.FormatFloat(t.Rate, 'f', -1, 64) + " req/s"
			*why = measure.NoSuccessText(where, run.Load) + ": the search stops"
		}
		first = false
		if measured != nil {
			measured(t, run)
		}
	}
	return func(ctx context.Context, t capacity.Trial) (capacity.Observation, error) {
		if *why != "" {
			return capacity.Observation{}, ErrDeadTarget
		}
		return r.Run(ctx, t)
	}
}
