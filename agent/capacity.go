package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/edgebench/edgebench/capacity"
	"github.com/edgebench/edgebench/capacity/loadtrial"
	"github.com/edgebench/edgebench/measure"
	"github.com/edgebench/edgebench/probe"
	"github.com/edgebench/edgebench/wire"
)

// Defaults of a capacity command's zero fields.
const (
	defaultTrial = 5 * time.Second
	defaultStart = 50
)

// capacityConfig is the search a capacity command asks for, within the
// policy: no trial above the rate cap (max_rate), none longer than
// max_duration, and all of them within max_duration x max_repeat (the
// time a repeated load test may take), unless the command asks for less.
// Refusals are *RefusedError; one over a cap names the cap.
func (a *Agent) capacityConfig(cs *wire.CapacitySpec) (capacity.Config, error) {
	caps := a.cfg.Policy
	slo, err := capacity.ParseSLO(cs.SLO)
	if err != nil {
		return capacity.Config{}, refusef("slo: %v", err)
	}
	trial, err := msDuration("trial", cs.TrialMS)
	if err != nil {
		return capacity.Config{}, err
	}
	final, err := msDuration("final", cs.FinalMS)
	if err != nil {
		return capacity.Config{}, err
	}
	budget, err := msDuration("budget", cs.BudgetMS)
	if err != nil {
		return capacity.Config{}, err
	}
	warmup, err := msDuration("warmup", cs.Load.WarmupMS)
	if err != nil {
		return capacity.Config{}, err
	}
	total := caps.MaxDuration * time.Duration(max(caps.MaxRepeat, 1))
	c := capacity.Config{SLO: slo, Start: cs.StartRate, MaxRate: cs.MaxRate, Tolerance: cs.Tolerance,
		Duration: cmpOr(trial, min(defaultTrial, caps.MaxDuration)), Warmup: warmup, Budget: cmpOr(budget, total)}
	c.Final = cmpOr(final, min(3*c.Duration, caps.MaxDuration))
	if c.Warmup == 0 {
		c.Warmup = -1 // none, as a load test's
	}
	if c.MaxRate == 0 {
		c.MaxRate = caps.MaxRate
	}
	if c.Start == 0 {
		c.Start = min(defaultStart, c.MaxRate)
	}
	switch {
	case c.MaxRate > caps.MaxRate || c.MaxRate != c.MaxRate:
		return c, refusef("max rate %v over cap %v", c.MaxRate, caps.MaxRate)
	case c.Start > caps.MaxRate:
		return c, refusef("start rate %v over cap %v", c.Start, caps.MaxRate)
	case c.Duration > caps.MaxDuration:
		return c, refusef("trial %v over cap %v", c.Duration, caps.MaxDuration)
	case c.Final > caps.MaxDuration:
		return c, refusef("final trial %v over cap %v", c.Final, caps.MaxDuration)
	case c.Budget > total:
		return c, refusef("budget %v over cap %v (max_duration x max_repeat)", c.Budget, total)
	}
	if _, err := capacity.New(c); err != nil {
		return c, refusef("capacity: %v", err)
	}
	return c, nil
}

func cmpOr(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// capacitySpecs is what the policy checks of a capacity command: its
// longest trial at its highest rate, as a load test.
func capacityLoadSpec(cs *wire.CapacitySpec, c capacity.Config) (LoadSpec, error) {
	lt := cs.Load
	lt.DurationMS, lt.Rate, lt.Requests, lt.Repeat = c.Final.Milliseconds(), c.MaxRate, 0, 0
	return loadSpecOf(&lt)
}

// capacitySearch runs the search of a capacity command: its trials as
// load tests with the probe on the watched processes, a running event per
// trial, and the result: the answer with every trial (Result.Capacity)
// and the final trial's run, the figures the collector compares.
func (a *Agent) capacitySearch(ctx context.Context, j *job, res *wire.Result) error {
	cs := j.cmd.Spec.Capacity
	for _, l := range cs.Load.Labels {
		res.Labels[l.K] = l.V
	}
	sc, err := a.capacityConfig(cs) // checked when accepted
	if err != nil {
		return err
	}
	s, err := capacity.New(sc)
	if err != nil {
		return err
	}
	cfg := loadConfigOf(&cs.Load, j.target, a.opt.Version)
	var watches []probe.Watch
	for _, w := range cs.Load.Watch {
		watches = append(watches, probe.ParseWatch(w))
	}
	var final *measure.Run
	window, stopWindows := a.windowEvents(ctx, j.cmd.ID)
	defer stopWindows()
	r := loadtrial.Runner{Load: cfg, Watches: watches, ProbeRoot: a.opt.ProbeRoot,
		Window: func(t capacity.Trial, start bool) { window(t.N-1, start) }, // trial 1 is run 0
		Measured: func(t capacity.Trial, run measure.Run) {
			if t.Kind == capacity.Final {
				final = &run
			}
		}}
	var dead string
	out, err := capacity.Drive(ctx, s, loadtrial.StopIfDead(r, &dead), func(rec capacity.Record) {
		verdict := "pass"
		if !rec.Pass {
			verdict = "fail"
		}
		a.event(ctx, j.cmd.ID, wire.StateRunning, fmt.Sprintf("trial %d (%s) at %.0f req/s: %s", rec.N, rec.Kind, rec.Rate, verdict),
			&wire.Progress{ElapsedMS: rec.Duration.Milliseconds(), Completed: rec.Requests, RPS: rec.Achieved, Errors: rec.Failed}, "")
	})
	rep := out.Report(s.Config())
	if dead != "" {
		rep.LimitedBy, rep.Answer, err = "errors", "none measured: "+dead, errors.New(dead)
	}
	res.Capacity = rep.Wire()
	res.Warnings = append(res.Warnings, "capacity: "+rep.Answer)
	// The spec is the search's, not its answer's: results of one search
	// on several devices compare in one table, apart from load tests.
	spec := cfg
	spec.Rate, spec.Duration = 0, sc.Final
	res.Spec = measure.SpecOf(spec, 1, 500*time.Millisecond, cs.Load.Watch)
	res.Spec.Mode = "capacity"
	if final != nil && final.Load.Rate == out.Capacity {
		measure.AddRuns(res, []measure.Run{*final})
	}
	return err
}
