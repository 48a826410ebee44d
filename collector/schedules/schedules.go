package schedules

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/collector/group"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/scheduledb"
	"github.com/edgebench/edgebench/wire"
)

// maxBackfill bounds the firings recorded as missed for the time no
// collector was running.
const maxBackfill = 100

// Store is what the scheduler reads and writes of the store (a
// *store.Store).
type Store interface {
	// DueSchedules are the schedules not paused whose next firing is due.
	DueSchedules(ctx context.Context, now time.Time) ([]scheduledb.Schedule, error)
	// ClaimRun claims the firing of sch due at due for collector, once
	// among the collectors sharing the store.
	ClaimRun(ctx context.Context, sch *scheduledb.Schedule, due, next time.Time, missed []time.Time, collector string, now time.Time) (bool, error)
	// FinishRun records what a claimed firing sent and missed.
	FinishRun(ctx context.Context, r *scheduledb.ScheduleRun) error
	// Devices lists the devices the store knows.
	Devices(ctx context.Context) ([]store.Device, error)
}

// Trigger sends a load-test command as the collector's API does, and
// says which command it sent and to which devices (fleet/id).
type Trigger func(ctx context.Context, req scheduledb.TriggerRequest) (commandID string, devices []string, err error)

// Config configures a Scheduler.
type Config struct {
	Store   Store
	Trigger Trigger
	// Fired, when set, is told of each firing once it is recorded: the
	// collector raises an alert for one that missed devices or failed.
	Fired func(sch *scheduledb.Schedule, run *scheduledb.ScheduleRun)
	Name  string        // the collector's name in the firings it records
	Tick  time.Duration // how often due schedules are looked for; default 1 s
	// MaxFirings bounds the firings under way at once (a jittered one
	// lasts up to its jitter); default 64. Past it, the schedules due
	// are left due, for the next tick or another collector.
	MaxFirings int
	Log        *zap.Logger
}

// Scheduler fires the schedules of the store that fall due. Each firing
// is one goroutine of the scheduler's, at most MaxFirings at once.
type Scheduler struct {
	cfg   Config
	log   *zap.Logger
	slots chan struct{}  // one per firing under way
	wg    sync.WaitGroup // the firings under way
}

// New returns a scheduler; Run runs it.
func New(cfg Config) *Scheduler {
	if cfg.Tick <= 0 {
		cfg.Tick = time.Second
	}
	if cfg.MaxFirings <= 0 {
		cfg.MaxFirings = 64
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	return &Scheduler{cfg: cfg, log: cfg.Log, slots: make(chan struct{}, cfg.MaxFirings)}
}

// Run fires the schedules that fall due, checking every tick, until ctx
// ends; then it waits for the firings under way.
func (s *Scheduler) Run(ctx context.Context) {
	defer s.wg.Wait()
	t := time.NewTicker(s.cfg.Tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.FireDue(ctx, time.Now())
	}
}

// FireDue claims and fires each schedule due at now. The firings it
// claims run on, and Run waits for them; with MaxFirings under way it
// claims no more.
func (s *Scheduler) FireDue(ctx context.Context, now time.Time) {
	me := s.cfg.Name
	due, err := s.cfg.Store.DueSchedules(ctx, now)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("schedules", zap.Error(err))
		}
		return
	}
	for i := range due {
		select {
		case s.slots <- struct{}{}:
		default:
			s.log.Warn("schedules: firings under way at their limit, the others left due", zap.Int("limit", cap(s.slots)),
				zap.Int("due", len(due)-i))
			return
		}
		sch := &due[i]
		// The latest due time at or before now is fired; the earlier
		// ones (the collectors were down) are recorded as missed.
		at := sch.NextAt
		var missed []time.Time
		for {
			n := sch.Next(at)
			if n.IsZero() || n.After(now) {
				break
			}
			missed = append(missed, at)
			if len(missed) > maxBackfill {
				missed = missed[1:]
			}
			at = n
		}
		next := sch.Next(at)
		ok, err := s.cfg.Store.ClaimRun(ctx, sch, at, next, missed, me, now)
		if err != nil || !ok { // !ok: another collector fires it
			<-s.slots
			if err != nil {
				s.log.Warn("schedule claim", zap.String("schedule", sch.Name), zap.Error(err))
			}
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() { <-s.slots }()
			run := s.fire(ctx, sch, at, now, me)
			if err := s.cfg.Store.FinishRun(context.WithoutCancel(ctx), run); err != nil {
				s.log.Warn("schedule run", zap.String("schedule", sch.Name), zap.Error(err))
			}
			if s.cfg.Fired != nil {
				s.cfg.Fired(sch, run)
			}
		}()
	}
}

// fire sends a firing: one ordinary trigger, or with Jitter one per online
// device at a random moment of the jitter window, in the order of their
// moments. Devices offline or busy at the firing are recorded as missed.
func (s *Scheduler) fire(ctx context.Context, sch *scheduledb.Schedule, due, now time.Time, me string) *scheduledb.ScheduleRun {
	run := &scheduledb.ScheduleRun{Schedule: sch.Name, DueAt: due, FiredAt: now, Collector: me}
	req := sch.Trigger
	req.Spec.Labels = append([]wire.Label(nil), req.Spec.Labels...)
	req.Spec.Labels = slicesDeleteLabel(req.Spec.Labels, group.ScheduleLabel)
	req.Spec.Labels = append(req.Spec.Labels, wire.Label{K: group.ScheduleLabel, V: sch.Name})
	devs, err := s.cfg.Store.Devices(ctx)
	if err != nil {
		run.Error = err.Error()
		return run
	}
	var online []store.Device
	loaderFleet := req.Fleet
	for _, d := range devs {
		if !selected(&d, &req) {
			continue
		}
		loaderFleet = cmp.Or(loaderFleet, d.Fleet)
		addr := d.Fleet + "/" + d.ID
		switch {
		case !d.Online:
			run.Missed = append(run.Missed, scheduledb.Missed{Device: addr, Reason: "offline"})
		case d.BusyCommand != "" && !req.Spec.Queue:
			run.Missed = append(run.Missed, scheduledb.Missed{Device: addr, Reason: "busy with command " + d.BusyCommand})
		default:
			online = append(online, d)
		}
	}
	if req.Device != "" && len(run.Missed) > 0 && len(online) == 0 {
		return run // the one device is offline or busy: nothing sent
	}
	if req.TargetDevice != "" && targetMissed(run, devs, cmp.Or(req.TargetFleet, loaderFleet), req.TargetDevice) {
		return run // the run's other device is offline or busy: nothing sent
	}
	if sch.Jitter <= 0 {
		id, devices, err := s.cfg.Trigger(ctx, req)
		if err != nil {
			run.Error = err.Error()
			return run
		}
		run.Commands, run.Devices = []string{id}, devices
		return run
	}
	if len(online) == 0 {
		run.Error = "no online device matches"
		return run
	}
	type moment struct {
		d    store.Device
		wait time.Duration // after start
	}
	start := time.Now()
	moments := make([]moment, len(online))
	for i, d := range online {
		moments[i] = moment{d, rand.N(sch.Jitter)}
	}
	slices.SortFunc(moments, func(a, b moment) int { return cmp.Compare(a.wait, b.wait) })
	t := time.NewTimer(0)
	defer t.Stop()
	for _, m := range moments {
		t.Reset(time.Until(start.Add(m.wait)))
		select {
		case <-ctx.Done():
			sort.Strings(run.Devices)
			return run
		case <-t.C:
		}
		one := req
		one.Fleet, one.Device, one.Select = m.d.Fleet, m.d.ID, nil
		id, devices, err := s.cfg.Trigger(ctx, one)
		if err != nil {
			run.Missed = append(run.Missed, scheduledb.Missed{Device: m.d.Fleet + "/" + m.d.ID, Reason: err.Error()})
			continue
		}
		run.Commands = append(run.Commands, id)
		run.Devices = append(run.Devices, devices...)
	}
	sort.Strings(run.Devices)
	return run
}

// targetMissed records the target of a run across two devices as missed
// when it is offline or busy, and says so: the run needs both devices,
// and the target's watch is not queued behind another command.
func targetMissed(run *scheduledb.ScheduleRun, devs []store.Device, fleet, id string) bool {
	for _, d := range devs {
		if d.ID != id || (fleet != "" && d.Fleet != fleet) {
			continue
		}
		addr := d.Fleet + "/" + d.ID
		switch {
		case !d.Online:
			run.Missed = append(run.Missed, scheduledb.Missed{Device: addr, Reason: "the target is offline"})
		case d.BusyCommand != "":
			run.Missed = append(run.Missed, scheduledb.Missed{Device: addr, Reason: "the target is busy with command " + d.BusyCommand})
		default:
			continue
		}
		return true
	}
	return false // unknown or ambiguous: the trigger says which
}

// selected reports whether d is one of the devices req chooses.
func selected(d *store.Device, req *scheduledb.TriggerRequest) bool {
	if req.Fleet != "" && d.Fleet != req.Fleet {
		return false
	}
	switch {
	case req.Device != "":
		return d.ID == req.Device
	case len(req.Select) > 0:
		return d.Matches(req.Select)
	}
	return true
}

func slicesDeleteLabel(ls []wire.Label, k string) []wire.Label {
	out := ls[:0]
	for _, l := range ls {
		if !strings.EqualFold(l.K, k) {
			out = append(out, l)
		}
	}
	return out
}
