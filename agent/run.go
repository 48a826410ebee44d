package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime/debug"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/capacity"
	"github.com/edgebench/edgebench/loadgen"
	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/measure"
	"github.com/edgebench/edgebench/probe"
	"github.com/edgebench/edgebench/transport"
	"github.com/edgebench/edgebench/wire"
)

// progressEvery is how often a running test reports its progress.
const progressEvery = 2 * time.Second

// execute runs one accepted command to its end and publishes its result
// and final event. ctx ends when the agent stops.
func (a *Agent) execute(ctx context.Context, j *job) {
	cmd := j.cmd
	log := a.log.With(zap.String("cmd", cmd.ID), zap.String("result", j.resultID))
	if a.opt.Now().After(cmd.ExpiresAt) {
		a.event(ctx, cmd.ID, wire.StateTimedOut, "expired in the queue", nil, "")
		return
	}
	budget := a.budget(cmd)
	jctx, cancel := context.WithCancelCause(ctx)
	jctx, stopTimer := context.WithTimeoutCause(jctx, budget, errTimedOut)
	defer stopTimer()
	j.ctx, j.cancel = jctx, cancel
	a.mu.Lock()
	a.cur = j
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.cur = nil
		a.mu.Unlock()
		cancel(nil)
	}()

	if err := WriteInflight(a.cfg.StateDir, Inflight{CommandID: cmd.ID, ResultID: j.resultID, StartedAt: a.opt.Now().UTC()}); err != nil {
		log.Warn("in-flight marker", zap.Error(err))
	}
	defer func() {
		if err := ClearInflight(a.cfg.StateDir); err != nil {
			log.Warn("clear in-flight marker", zap.Error(err))
		}
	}()
	if cmd.Kind != wire.KindProbe { // a watch says it runs once it records, and what it watches
		a.event(ctx, cmd.ID, wire.StateRunning, "", nil, "")
	}

	res := a.newResult(j)
	var err error
	switch cmd.Kind {
	case wire.KindLoadTest:
		err = a.loadTest(jctx, j, res)
	case wire.KindProbe:
		err = a.probeOnly(jctx, j, res)
	case wire.KindCapacity:
		err = a.capacitySearch(jctx, j, res)
	}
	// What the run held (its connections' state, and what a hostile
	// server made it buffer) goes back to the system now, not minutes
	// later at the runtime's own pace: the daemon stays small between
	// runs.
	debug.FreeOSMemory()
	var stop measure.Stop
	switch cause := context.Cause(jctx); {
	case errors.Is(cause, errTimedOut):
		stop = measure.Stop{TimedOut: true, Reason: fmt.Sprintf("over its time budget of %v", budget)}
	case errors.Is(cause, errCancelled) || errors.Is(cause, errShutdown):
		stop = measure.Stop{Reason: cause.Error()}
	}
	measure.Finish(res, stop, err)
	state, reason := res.Outcome, res.Reason
	// The run is over: a command arriving now is not refused as busy (the
	// runner starts it once this result is out).
	a.mu.Lock()
	a.cur = nil
	a.mu.Unlock()
	// The result goes to the spool first: it survives a broker that is
	// away and an agent that stops now.
	pubCtx, done := context.WithTimeout(context.Background(), 10*time.Second)
	defer done()
	if perr := a.link.PublishResult(pubCtx, res); perr != nil {
		if !errors.Is(perr, transport.ErrKeptInMemory) {
			log.Error("result not spooled", zap.Error(perr))
			a.event(pubCtx, cmd.ID, wire.StateFailed, "result not stored: "+perr.Error(), nil, "")
			return
		}
		// Published all the same: the run's outcome stands, and says
		// that its result is not on disk.
		reason = strings.TrimPrefix(reason+"; "+perr.Error(), "; ")
	}
	log.Info("run ended", zap.String("outcome", string(state)), zap.String("reason", reason))
	a.event(pubCtx, cmd.ID, state, reason, nil, j.resultID)
}

// budget is how long a command may run: its own length with room for the
// warm-up, the drain and the probe's edges, at most the policy's cap.
func (a *Agent) budget(cmd *wire.Command) time.Duration {
	var d time.Duration
	switch {
	case cmd.Spec.LoadTest != nil:
		lt := cmd.Spec.LoadTest
		one := time.Duration(lt.DurationMS+lt.WarmupMS+max(lt.TimeoutMS, 2000))*time.Millisecond + 5*time.Second
		if lt.DurationMS == 0 {
			one = a.cfg.Policy.MaxDuration // bounded by -n: the cap bounds it
		}
		d = one * time.Duration(max(lt.Repeat, 1))
	case cmd.Spec.Probe != nil:
		d = time.Duration(cmd.Spec.Probe.DurationMS)*time.Millisecond + 5*time.Second
	case cmd.Spec.Capacity != nil:
		// The search stops before its trials overrun its budget; each
		// trial may add a drain (its timeout) and the probe's edges.
		if c, err := a.capacityConfig(cmd.Spec.Capacity); err == nil {
			if s, err := capacity.New(c); err == nil {
				c = s.Config()
			}
			timeout := time.Duration(max(cmd.Spec.Capacity.Load.TimeoutMS, 2000)) * time.Millisecond
			d = c.Budget + time.Duration(c.MaxTrials)*(timeout+time.Second)
		}
	}
	return min(d, a.cfg.Policy.MaxDuration*time.Duration(max(a.cfg.Policy.MaxRepeat, 1))+time.Minute)
}

// newResult is the envelope of j's result.
func (a *Agent) newResult(j *job) *wire.Result {
	return measure.NewResult(measure.Origin{ID: j.resultID, CommandID: j.cmd.ID, Fleet: a.cfg.Fleet, Device: a.cfg.DeviceID,
		BootID: a.bootID, Kind: j.cmd.Kind, At: a.opt.Now(), Info: a.info, Labels: a.cfg.Labels})
}

// loadTest runs the load test (repeated as asked) with the probe.
func (a *Agent) loadTest(ctx context.Context, j *job, res *wire.Result) error {
	lt := j.cmd.Spec.LoadTest
	for _, l := range lt.Labels {
		res.Labels[l.K] = l.V
	}
	cfg := loadConfigOf(lt, j.target, a.opt.Version)
	interval := time.Second
	res.Spec = measure.SpecOf(cfg, max(lt.Repeat, 1), interval, lt.Watch)
	var watches []probe.Watch
	for _, w := range lt.Watch {
		watches = append(watches, probe.ParseWatch(w))
	}
	var auto *measure.Auto // --repeat auto: lt.Repeat is the most runs, which the policy capped
	if lt.RepeatAuto {
		auto = &measure.Auto{RSDPct: lt.RepeatRSDPct, Max: max(lt.Repeat, measure.MinAutoRuns), Budget: time.Duration(lt.RepeatBudgetMS) * time.Millisecond}
	}
	window, stopWindows := a.windowEvents(ctx, j.cmd.ID)
	runs, err := measure.Repeat(ctx, measure.Test{
		Load: cfg, Repeat: lt.Repeat, Auto: auto, ProbeRoot: a.opt.ProbeRoot, Interval: interval, Watches: watches, Window: window,
		Progress: func(i int) func(loadgen.Progress) {
			var last time.Time
			return func(p loadgen.Progress) {
				if p.Warmup || time.Since(last) < progressEvery {
					return
				}
				last = time.Now()
				pr := &wire.Progress{ElapsedMS: p.Elapsed.Milliseconds(), Completed: p.Completed, Errors: p.Errors}
				if s := p.Elapsed.Seconds(); s > 0 {
					pr.RPS = float64(p.Completed) / s
				}
				a.event(ctx, j.cmd.ID, wire.StateRunning, fmt.Sprintf("run %d of %d", i+1, max(lt.Repeat, 1)), pr, "")
			}
		},
	})
	stopWindows()
	measure.AddRuns(res, runs)
	measure.MarkAuto(res, runs, auto)
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return nil // stopped: the outcome says why
	}
	return measure.NoSuccess(runs)
}

// loadSpecOf is what the policy checks of a loadtest spec. Milliseconds
// that a Duration cannot hold are refused here.
func loadSpecOf(lt *wire.LoadTestSpec) (LoadSpec, error) {
	d, err := msDuration("duration", lt.DurationMS)
	if err != nil {
		return LoadSpec{}, err
	}
	timeout, err := msDuration("timeout", lt.TimeoutMS)
	if err != nil {
		return LoadSpec{}, err
	}
	warmup, err := msDuration("warmup", lt.WarmupMS)
	if err != nil {
		return LoadSpec{}, err
	}
	s := LoadSpec{URL: lt.URL, Method: lt.Method, Body: lt.Body, Connections: lt.Connections,
		Duration: d, Rate: lt.Rate, Requests: lt.Requests, Timeout: timeout, Warmup: warmup, Repeat: lt.Repeat,
		HTTP2: lt.HTTP2, Streams: lt.Streams}
	for _, h := range lt.Headers {
		s.Headers = append(s.Headers, h.Name+": "+h.Value)
	}
	return s, nil
}

// loadConfigOf is the load generator's configuration of a spec the policy
// checked, dialling only the addresses it checked. The TLS and HTTP/2
// options were checked by the decoder (wire.DecodeCommand).
func loadConfigOf(lt *wire.LoadTestSpec, t *AllowedTarget, version string) loadgen.Config {
	s, _ := loadSpecOf(lt) // checked before the command was accepted
	c := loadgen.Config{
		URL: lt.URL, Method: lt.Method, Body: lt.Body, Connections: lt.Connections, Threads: lt.Threads,
		Requests: lt.Requests, Duration: s.Duration, Rate: lt.Rate, KeepAlive: lt.KeepAlive, Timeout: s.Timeout,
		Warmup: s.Warmup, LengthCheck: lt.LengthCheck, HTTP2: lt.HTTP2, Streams: lt.Streams,
	}
	if t := lt.TLS; t != nil {
		c.TLS = loadgen.TLSConfig{CACerts: t.CACerts, Insecure: t.Insecure, NoResume: t.NoResume}
		c.TLS.Version, _ = report.ParseTLSVersion(t.Version)
	}
	for _, h := range lt.Headers {
		c.Headers = append(c.Headers, report.Header{Name: h.Name, Value: h.Value})
	}
	if t != nil {
		for _, ap := range t.Addrs {
			c.Addrs = append(c.Addrs, net.IP(ap.Addr().AsSlice()))
		}
	}
	return c
}
