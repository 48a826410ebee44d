package join

import (
	"errors"
	"fmt"

	"github.com/edgebench/edgebench/collector/rebuild"
	"github.com/edgebench/edgebench/probe/machine"
	"github.com/edgebench/edgebench/verdict"
	"github.com/edgebench/edgebench/wire"
)

// MaxPayload bounds the joined result's payload (the store's
// MaxStoredPayload): two devices' results of at most
// wire.DefaultMaxPayload each.
const MaxPayload = 2 * wire.DefaultMaxPayload

// maxWarnings is the most warnings a result carries (the decoder's
// limit of Result.Warnings).
const maxWarnings = 64

// ErrNotMeasured is the error of a watch that measured no window of the
// load: the target's machine is unknown, and the run is not stored.
var ErrNotMeasured = errors.New("the target's watch measured no window of the load")

// Join makes the result of a run across two devices from the loader's
// result and the target's watch's; labels are the load command's, which
// the joined result carries over the target's own. The loader's run i is
// joined with the watch's run whose window is i and closed: the first
// such. A loader's run without one keeps the loader's verdict and no
// target machine; a watch with no such run at all did not measure the
// load (ErrNotMeasured).
func Join(loader, target *wire.Result, labels []wire.Label) (*wire.Result, error) {
	switch {
	case loader.Kind != "" && loader.Kind != wire.KindLoadTest && loader.Kind != wire.KindCapacity:
		return nil, fmt.Errorf("the loader's result is of a %s command, not a load test", loader.Kind)
	case target.Kind != wire.KindProbe:
		return nil, fmt.Errorf("the target's result is of a %s command, not a watch", target.Kind)
	case loader.Outcome != wire.StateSucceeded:
		return nil, fmt.Errorf("the loader's result is %s: %s", loader.Outcome, loader.Reason)
	}
	windows := Windows(target)
	keys := runKeys(loader)
	measured := 0 // the loader's runs, and a capacity search's trials, with a window
	for _, k := range keys {
		if _, ok := windows[k]; ok {
			measured++
		}
	}
	if c := loader.Capacity; c != nil {
		for k := range c.Trials {
			if _, ok := windows[k]; ok {
				measured++
			}
		}
	}
	if measured == 0 {
		return nil, fmt.Errorf("%w (%s)", ErrNotMeasured, describeWatch(target))
	}

	j := *loader
	j.ID, j.Fleet, j.Device, j.BootID = target.ID, target.Fleet, target.Device, target.BootID
	j.Labels = make(map[string]string, len(target.Labels)+len(labels))
	for k, v := range target.Labels {
		j.Labels[k] = v
	}
	for _, l := range labels {
		j.Labels[l.K] = l.V
	}
	fp := target.Fingerprint
	fp.Server, fp.ServerSHA256 = loader.Fingerprint.Server, loader.Fingerprint.ServerSHA256
	fp.Throttled = fp.Throttled || loader.Fingerprint.Throttled
	fp.FreqDropped = fp.FreqDropped || loader.Fingerprint.FreqDropped
	j.Fingerprint = fp
	j.Loader = &wire.Loader{Fleet: loader.Fleet, Device: loader.Device, ResultID: loader.ID, WatchID: target.CommandID,
		Fingerprint: loader.Fingerprint}

	spec := rebuild.RunSpec(loader)
	j.Runs = make([]wire.Run, len(loader.Runs))
	for i := range loader.Runs {
		run := loader.Runs[i]
		run.Loader, run.System, run.Window = run.System, nil, nil
		if w, ok := windows[keys[i]]; ok {
			run.System, run.Window = w.System, &wire.WatchWindow{Run: keys[i]}
			v, err := judge(&loader.Runs[i], spec, w.System)
			if err != nil {
				return nil, fmt.Errorf("run %d: %w", i, err)
			}
			run.Verdict = v
		}
		j.Runs[i] = run
	}
	if c := loader.Capacity; c != nil {
		cp := *c
		cp.Trials = append([]wire.CapacityTrial(nil), c.Trials...)
		for k := range cp.Trials {
			if w, ok := windows[k]; ok && w.System != nil {
				if cpu, ok := verdict.ServerCPU(verdict.Input{System: rebuild.SystemReport(w.System)}); ok {
					bp := int32(cpu * 100)
					cp.Trials[k].ServerCPUBP = &bp
				}
			}
		}
		j.Capacity = &cp
	}
	j.Warnings = nil
	for _, w := range loader.Warnings {
		j.Warnings = append(j.Warnings, "the loader: "+w)
	}
	for _, w := range target.Warnings {
		j.Warnings = append(j.Warnings, "the target: "+w)
	}
	if len(j.Warnings) > maxWarnings {
		n := len(j.Warnings) - maxWarnings + 1
		j.Warnings = append(j.Warnings[:maxWarnings-1], fmt.Sprintf("and %d warnings more", n))
	}
	if err := fit(&j); err != nil {
		return nil, err
	}
	return &j, nil
}

// Windows are the watch's runs of closed windows, by the loader's run
// they cover: the first of each.
func Windows(target *wire.Result) map[int]*wire.Run {
	out := map[int]*wire.Run{}
	for i := range target.Runs {
		r := &target.Runs[i]
		if w := r.Window; w != nil && !w.Open {
			if _, dup := out[w.Run]; !dup {
				out[w.Run] = r
			}
		}
	}
	return out
}

// runKeys are the window numbers of the loader's runs: a load test's
// run i is its repetition i; a capacity search's one run is its final
// trial, whose window is its trial's number less one (the last trial of
// kind final).
func runKeys(loader *wire.Result) []int {
	keys := make([]int, len(loader.Runs))
	for i := range keys {
		keys[i] = i
	}
	if c := loader.Capacity; c != nil && len(keys) > 0 {
		keys[0] = -1
		for k := len(c.Trials) - 1; k >= 0; k-- {
			if c.Trials[k].Kind == "final" {
				keys[0] = k
				break
			}
		}
	}
	return keys
}

// describeWatch says what a watch recorded, for a failure: its runs and
// their windows.
func describeWatch(target *wire.Result) string {
	open, none := 0, 0
	for _, r := range target.Runs {
		switch {
		case r.Window == nil:
			none++
		case r.Window.Open:
			open++
		}
	}
	return fmt.Sprintf("it recorded %d run%s: %d of a window whose end was never marked, %d of no window", len(target.Runs), plural(len(target.Runs)), open, none)
}

// judge is the verdict of the loader's run r, of spec, with the target's
// machine over its window: verdict.JudgeTwo.
func judge(r *wire.Run, spec wire.RunSpec, target *wire.System) (*wire.Verdict, error) {
	lr, err := rebuild.LoadResult(r, spec)
	if err != nil {
		return nil, err
	}
	in := verdict.TwoInput{Loader: verdict.Input{Load: lr}}
	if r.System != nil {
		in.Loader.System = rebuild.SystemReport(r.System)
		in.Loader.GeneratorCPUs = generatorCPUs(in.Loader.System)
	}
	if target != nil {
		in.Target = rebuild.SystemReport(target)
	}
	v := verdict.JudgeTwo(in)
	return &wire.Verdict{LimitedBy: v.LimitedBy, Valid: v.Valid, Reasons: v.Reasons}, nil
}

// generatorCPUs are the cores the loader's generator (its row of role
// generator) could run on, when fewer than the machine's; nil otherwise.
func generatorCPUs(rep *machine.Report) []int {
	for _, p := range rep.Summary.Procs {
		if p.Role == machine.RoleGenerator && len(p.CPUs) > 0 && len(p.CPUs) < len(rep.Summary.PerCPUBusy) {
			return p.CPUs
		}
	}
	return nil
}

// fit keeps the joined result within MaxPayload: the loader's samples go
// first (its summary stays), then every other target sample.
func fit(j *wire.Result) error {
	size := func() int {
		b, err := j.MarshalMsg(nil)
		if err != nil { // only the wire's own types: cannot fail
			return MaxPayload + 1
		}
		return len(b)
	}
	if size() <= MaxPayload {
		return nil
	}
	for i := range j.Runs {
		if l := j.Runs[i].Loader; l != nil {
			thin := *l
			thin.Samples = nil
			j.Runs[i].Loader = &thin
		}
	}
	for size() > MaxPayload {
		thinned := false
		for i := range j.Runs {
			s := j.Runs[i].System
			if s == nil || len(s.Samples) < 2 {
				continue
			}
			thin := *s
			thin.Samples = nil
			for k := 0; k < len(s.Samples); k += 2 {
				thin.Samples = append(thin.Samples, s.Samples[k])
			}
			thin.Stride = max(s.Stride, 1) * 2
			j.Runs[i].System, thinned = &thin, true
		}
		if !thinned {
			return fmt.Errorf("the joined result is %d bytes, over %d", size(), MaxPayload)
		}
	}
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
