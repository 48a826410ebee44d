package agent

// This file is the two-machine side of the agent: the watch (a probe
// command) on the target of a run across two devices, the marks of the
// load's windows the collector relays to it, and the window events of
// the loader's runs the collector relays.
//
// The sequence, for a load on device L of a server on device T:
//
//	collector -> T  probe {url, duration: the load's span and a margin}
//	T               accepted; running "watching nginx [812] ..." once recording
//	collector -> L  loadtest (on T's running)
//	L               accepted, running, then for each run i (a repetition,
//	                or a capacity trial): running {window: {start, i}}
//	                ... running {window: {end, i}}
//	collector -> T  mark {cmd: the probe's id, edge: start|end, run: i}
//	                (each relayed from L's event)
//	L               succeeded (its result: runs 0..n-1)
//	collector -> T  mark {edge: done}
//	T               succeeded (its result: one run per window, Window.Run i)
//
// A cancel of either is relayed to the other by the collector: a
// cancelled watch publishes what it recorded, its last window open.

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/measure"
	"github.com/edgebench/edgebench/probe"
	"github.com/edgebench/edgebench/wire"
)

// markQueue bounds the marks waiting for a watch to read them.
const markQueue = 16

// markGrace is how long a watch holds a mark that came before the end of
// the window open (see probeOnly).
const markGrace = 250 * time.Millisecond

// maxWatchSamples bounds the per-interval samples of a watch's result
// over all its runs: past it every k-th is kept (Stride), so the result
// stays well under the payload's cap whatever the watch's length.
const maxWatchSamples = 600

// checkWatch checks a probe command against the policy: a duration
// within policy.max_watch_duration, an interval within it, and a URL, if
// any, that names a port.
func (a *Agent) checkWatch(ps *wire.ProbeSpec) error {
	if ps == nil || ps.DurationMS <= 0 {
		return refusef("probe needs a duration")
	}
	d, err := msDuration("duration", ps.DurationMS)
	if err != nil {
		return err
	}
	if d > a.cfg.Policy.MaxWatchDuration {
		return refusef("duration %v over cap %v (policy.max_watch_duration)", d, a.cfg.Policy.MaxWatchDuration)
	}
	i, err := msDuration("interval", ps.IntervalMS)
	if err != nil {
		return err
	}
	if i > d {
		return refusef("interval %v over the duration %v", i, d)
	}
	if ps.URL != "" {
		if _, err := watchPort(ps.URL); err != nil {
			return err
		}
	}
	return nil
}

// watchPort is the TCP port of a load's URL: the server a watch watches
// is what listens on it.
func watchPort(raw string) (int, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return 0, refusef("watch URL %q: want an http:// or https:// URL", wire.Clip(raw))
	}
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil || n == 0 {
			return 0, refusef("watch URL %q: bad port %q", wire.Clip(raw), p)
		}
		return int(n), nil
	}
	if u.Scheme == "https" {
		return 443, nil
	}
	return 80, nil
}

// watches are the processes a watch reports, and the running event's
// words about them: those the command names, else what listens on the
// URL's port.
func (a *Agent) watches(ps *wire.ProbeSpec) ([]probe.Watch, string) {
	var ws []probe.Watch
	for _, w := range ps.Watch {
		ws = append(ws, probe.ParseWatch(w))
	}
	if len(ws) > 0 || ps.URL == "" {
		return ws, "watching " + strings.Join(ps.Watch, ", ")
	}
	port, _ := watchPort(ps.URL) // checked when accepted
	ws = probe.ServerWatches(a.opt.ProbeRoot, port)
	if len(ws) == 0 {
		return nil, fmt.Sprintf("watching the machine: nothing listens on port %d here", port)
	}
	names := make([]string, len(ws))
	for i, w := range ws {
		names[i] = w.String()
	}
	return ws, fmt.Sprintf("watching what listens on port %d: process %s", port, strings.Join(names, ", "))
}

// watchWindow is a load's window a watch has open.
type watchWindow struct {
	run int
}

// probeOnly records the machine for a probe command: the whole command
// as one run, or, on the target of a two-machine run, one run per window
// the marks open and close. It ends after the duration, at a mark of edge
// done, or when cancelled (its last run then interrupted).
func (a *Agent) probeOnly(ctx context.Context, j *job, res *wire.Result) error {
	ps := j.cmd.Spec.Probe
	interval := time.Duration(max(ps.IntervalMS, 100)) * time.Millisecond // checked: at most the duration
	if ps.IntervalMS == 0 {
		interval = time.Second
	}
	watches, note := a.watches(ps)
	res.Spec = wire.RunSpec{URL: ps.URL, DurationMS: ps.DurationMS, IntervalMS: interval.Milliseconds(), Watch: ps.Watch}
	p := probe.New(a.opt.ProbeRoot)
	defer p.Close()
	start := time.Now()
	rec := p.Record(ctx, interval, watches)
	a.event(ctx, j.cmd.ID, wire.StateRunning, note, nil, "")
	if len(watches) == 0 && ps.URL != "" {
		res.Warnings = append(res.Warnings, note)
	}
	t := time.NewTimer(time.Duration(ps.DurationMS) * time.Millisecond)
	defer t.Stop()
	var open *watchWindow
	closeWindow := func(never bool) {
		rep := rec.EndWindow()
		if rep == nil {
			return
		}
		s := rep.Summary
		res.Runs = append(res.Runs, wire.Run{StartedAt: s.Start.UTC(), DurationUS: s.End.Sub(s.Start).Microseconds(), DocLength: -1,
			System: measure.FromSystem(rep, s.Start), Window: &wire.WatchWindow{Run: open.run, Open: never}})
		res.Warnings = append(res.Warnings, rep.Warnings...)
		open = nil
	}
	// take acts on one mark; true at done.
	take := func(m wire.MarkSpec) bool {
		switch m.Edge {
		case wire.MarkStart:
			if open != nil {
				closeWindow(true)
				res.Warnings = append(res.Warnings, fmt.Sprintf("window of run %d: started again before its end was marked", m.Run))
			}
			rec.MarkStart()
			open = &watchWindow{run: m.Run}
		case wire.MarkEnd:
			if open == nil || open.run != m.Run {
				res.Warnings = append(res.Warnings, fmt.Sprintf("end of run %d's window marked, but it was not open", m.Run))
				return false
			}
			closeWindow(false)
		case wire.MarkDone:
			return true
		}
		return false
	}
	// Marks are separate messages, and the broker's client hands two that
	// come together to the agent in either order: the end of run i and
	// the start of run i+1 (or done) are relayed a few milliseconds apart.
	// A start of another run, or done, while a window is open is held up
	// to markGrace for that window's end, then taken as it came.
	var held *wire.MarkSpec
	var grace <-chan time.Time
loop:
	for {
		select {
		case <-t.C:
			break loop
		case <-ctx.Done():
			break loop
		case <-grace:
			h := *held
			held, grace = nil, nil
			if take(h) {
				break loop
			}
		case m := <-j.marks:
			if held != nil {
				h := *held
				held, grace = nil, nil
				if m.Edge == wire.MarkEnd && open != nil && m.Run == open.run {
					take(m) // the end it waited for, then the held mark
					m = h
				} else if take(h) {
					break loop
				}
			}
			if open != nil && (m.Edge == wire.MarkDone || m.Edge == wire.MarkStart && m.Run != open.run) {
				held, grace = &m, time.After(markGrace)
				continue
			}
			if take(m) {
				break loop
			}
		}
	}
	if open != nil {
		closeWindow(true)
	}
	sys := rec.Stop()
	if len(res.Runs) == 0 {
		res.Runs = []wire.Run{{StartedAt: start.UTC(), DurationUS: time.Since(start).Microseconds(), DocLength: -1,
			Interrupted: ctx.Err() != nil, System: measure.FromSystem(sys, start)}}
		res.Warnings = append(res.Warnings, sys.Warnings...)
	} else if ctx.Err() != nil {
		res.Runs[len(res.Runs)-1].Interrupted = true
	}
	thinSamples(res.Runs, maxWatchSamples)
	return nil
}

// thinSamples keeps at most most per-interval samples over runs: every
// k-th of each run, its Stride multiplied by k.
func thinSamples(runs []wire.Run, most int) {
	n := 0
	for _, r := range runs {
		if r.System != nil {
			n += len(r.System.Samples)
		}
	}
	if n <= most {
		return
	}
	k := (n + most - 1) / most
	for i := range runs {
		sys := runs[i].System
		if sys == nil {
			continue
		}
		kept := sys.Samples[:0]
		for j := 0; j < len(sys.Samples); j += k {
			kept = append(kept, sys.Samples[j])
		}
		sys.Samples = kept
		sys.Stride = max(sys.Stride, 1) * k
	}
}

// markCommand hands a mark to the running watch it names.
func (a *Agent) markCommand(ctx context.Context, cmd *wire.Command, reject func(string)) {
	mk := cmd.Spec.Mark
	if mk == nil {
		reject("mark without its spec")
		return
	}
	a.mu.Lock()
	j := a.cur
	a.mu.Unlock()
	if j == nil || j.cmd.ID != mk.CommandID || j.marks == nil {
		reject(fmt.Sprintf("no running watch %s", mk.CommandID))
		return
	}
	select {
	case j.marks <- *mk:
	default:
		reject(fmt.Sprintf("watch %s: %d marks not read yet", mk.CommandID, markQueue))
		return
	}
	a.event(ctx, cmd.ID, wire.StateAccepted, "", nil, "")
	a.event(ctx, cmd.ID, wire.StateRunning, "", nil, "")
	a.event(ctx, cmd.ID, wire.StateSucceeded, fmt.Sprintf("%s of run %d", mk.Edge, mk.Run), nil, "")
}

// windowEdge is an edge of a load's measured window, as the load
// generator's goroutine saw it.
type windowEdge struct {
	run   int
	start bool
	at    time.Time
}

// windowEvents publishes a running event at each edge of the measured
// windows of command cmdID (Event.Window), for the collector to
// relay to a watch on the target. The hook it returns never blocks (the
// load generator calls it); stop ends the publishing goroutine, after it
// has published what the hook was given.
func (a *Agent) windowEvents(ctx context.Context, cmdID string) (hook func(run int, start bool), stop func()) {
	edges := make(chan windowEdge, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for e := range edges {
			edge, what := wire.MarkEnd, "ends"
			if e.start {
				edge, what = wire.MarkStart, "starts"
			}
			a.publishEvent(ctx, &wire.Event{CommandID: cmdID, State: wire.StateRunning, At: e.at,
				Reason: fmt.Sprintf("measured window %s (run %d)", what, e.run), Window: &wire.WindowEdge{Edge: edge, Run: e.run}})
		}
	}()
	hook = func(run int, start bool) {
		select {
		case edges <- windowEdge{run: run, start: start, at: a.opt.Now().UTC()}:
		default:
			a.log.Warn("window event dropped: the event queue is full", zap.String("cmd", cmdID), zap.Int("run", run))
		}
	}
	return hook, func() {
		close(edges)
		<-done
	}
}
