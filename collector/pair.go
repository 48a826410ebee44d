package collector

// This file is a run across two devices, as the collector drives it: one
// device loads (the loader), the other serves and watches itself (the
// target). Trigger, given a target device, records the pair and sends the
// target its watch (a probe command over the load's span and a margin);
// a goroutine of the collector's (pairDriver) then reads what both devices
// say from the store, as the ingest records it:
//
//	watching  the watch runs            -> the load is sent to the loader
//	loading   the loader's window edges -> each relayed to the watch as a mark
//	          the load succeeded        -> mark done
//	joining   both results kept apart   -> joined (package join) and stored
//	                                       with the pair's end, at once
//
// A rejection, failure, cancel or timeout of either device, or a device
// gone offline, ends the other's command and fails the pair with that
// reason; nothing is stored. The devices' results are kept apart from the
// results (store.AddPairPart) until the join, so that neither is ever a
// result of its own. The driver reads the store, not the messages it
// received itself: behind a shared subscription the other collectors
// store what the devices send, and the driver sees it at its next look
// (pairTick); here, onEvent and onResult wake it at once.

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/collector/escape"
	"github.com/edgebench/edgebench/collector/join"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/scheduledb"
	"github.com/edgebench/edgebench/collector/store/sqldb"
	"github.com/edgebench/edgebench/wire"
)

// pairTimes are how long a run across two devices waits for its devices.
type pairTimes struct {
	// watchStart is how long the target has to run its watch; the
	// watch command expires then. Default 30 s.
	watchStart time.Duration
	// join is how long both results may take to arrive once the load is
	// over. Default 2 min.
	join time.Duration
}

func (p *pairTimes) fill() {
	if p.watchStart <= 0 {
		p.watchStart = 30 * time.Second
	}
	if p.join <= 0 {
		p.join = 2 * time.Minute
	}
}

const (
	// pairTick is how often a pair's driver looks at the store without
	// being woken (what another collector stored).
	pairTick = 250 * time.Millisecond
	// gapWait is how long an event missing from a device's sequence is
	// waited for before the ones after it are read.
	gapWait = 2 * time.Second
	// watchMargin is added to the load's span in the watch's duration:
	// the watch must outlast the load; the mark done ends it sooner.
	watchMargin = 30 * time.Second
	// sweepEvery is how often the pairs past their deadline are failed.
	sweepEvery = time.Minute
	// markTTL is how long a mark may wait to be taken.
	markTTL = time.Minute
)

// PairInfo is what Trigger says of a run across two devices.
type PairInfo struct {
	Loader  string `json:"loader"` // fleet/id
	Target  string `json:"target"` // fleet/id; the result is its
	WatchID string `json:"watch_id"`
}

// triggerPair starts a run across two devices: req.Device loads, and
// req.TargetDevice serves req.Spec.URL and watches itself. Both must be
// known and online, and the URL's host an address the target reports in
// its birth: a device is never turned against a host that is not its
// target.
func (c *Collector) triggerPair(ctx context.Context, req scheduledb.TriggerRequest, devs []store.Device) (*Triggered, error) {
	loader, err := findDevice(devs, req.Fleet, req.Device)
	if err != nil {
		return nil, fmt.Errorf("trigger: the loader: %w", err)
	}
	tfleet := cmpOr(req.TargetFleet, loader.Fleet)
	target, err := findDevice(devs, tfleet, req.TargetDevice)
	if err != nil {
		return nil, fmt.Errorf("trigger: the target: %w", err)
	}
	for _, d := range []struct {
		what string
		dev  *store.Device
	}{{"target", target}, {"loader", loader}} {
		if !d.dev.Online {
			return nil, fmt.Errorf("trigger: the %s %s/%s is %s: it cannot take part in the run", d.what, d.dev.Fleet, d.dev.ID, orWord(d.dev.State, "offline"))
		}
	}
	if err := targetHost(ctx, req.Spec.URL, target); err != nil {
		return nil, fmt.Errorf("trigger: %w", err)
	}
	if req.TTL <= 0 {
		req.TTL = 10 * time.Minute
	}
	span := loadSpan(&req)
	now := time.Now().UTC()
	spec := req.Spec
	spec.Watch = nil // the processes --watch names are the target's
	load := &wire.Command{V: wire.SchemaVersion, ID: wire.NewID(), Kind: wire.KindLoadTest, Spec: wire.CommandSpec{LoadTest: &spec}}
	interval := int64(1000)
	if req.Capacity != nil {
		cp := *req.Capacity
		cp.Load = spec
		load.Kind, load.Spec = wire.KindCapacity, wire.CommandSpec{Capacity: &cp}
		interval = 500
	}
	times := c.cfg.pairTimes
	watch := &wire.Command{V: wire.SchemaVersion, ID: wire.NewID(), IssuedAt: now, ExpiresAt: now.Add(times.watchStart), Kind: wire.KindProbe,
		Spec: wire.CommandSpec{Probe: &wire.ProbeSpec{URL: req.Spec.URL, DurationMS: (span + watchMargin).Milliseconds(), IntervalMS: interval,
			Watch: req.Spec.Watch}}}
	p := &store.Pair{ID: load.ID, WatchID: watch.ID, Fleet: loader.Fleet, Loader: loader.ID, TargetFleet: target.Fleet, Target: target.ID,
		Kind: string(load.Kind), State: store.PairWatching, Deadline: now.Add(times.watchStart + span + watchMargin + times.join)}
	b, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("trigger: %w", err)
	}
	if err := storeCall(ctx, c.cfg.storeTimeout, func(ctx context.Context) error { return c.store.AddPair(ctx, p, string(b)) }); err != nil {
		return nil, fmt.Errorf("trigger: %w", err)
	}
	d := &pairDriver{c: c, p: *p, load: load, watch: watch, labels: spec.Labels, ttl: req.TTL, wake: make(chan struct{}, 1),
		loader: wire.Addr{Fleet: loader.Fleet, Device: loader.ID}, target: wire.Addr{Fleet: target.Fleet, Device: target.ID},
		log: c.log.With(zap.String("pair", p.ID), zap.String("loader", loader.Fleet+"/"+loader.ID), zap.String("target", target.Fleet+"/"+target.ID))}
	c.pairMu.Lock()
	if c.pairs == nil {
		c.pairs = map[string]chan struct{}{}
	}
	c.pairs[load.ID], c.pairs[watch.ID] = d.wake, d.wake
	c.pairMu.Unlock()
	topic, err := c.send(ctx, target.Fleet, target.ID, watch)
	if err != nil {
		c.forget(d)
		c.endPair(context.WithoutCancel(ctx), p.ID, store.PairFailed, "the watch could not be sent: "+err.Error())
		return nil, fmt.Errorf("trigger: the watch: %w", err)
	}
	d.started = time.Now()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer c.forget(d)
		d.run(c.ctx)
	}()
	c.log.Info("run across two devices: watch sent", zap.String("pair", p.ID), zap.String("watch", watch.ID),
		zap.String("loader", loader.Fleet+"/"+loader.ID), zap.String("target", target.Fleet+"/"+target.ID), zap.Duration("watch_for", span+watchMargin))
	devices := []string{loader.Fleet + "/" + loader.ID, target.Fleet + "/" + target.ID}
	sort.Strings(devices)
	return &Triggered{CommandID: p.ID, Devices: devices, Topics: []string{topic},
		Pair: &PairInfo{Loader: loader.Fleet + "/" + loader.ID, Target: target.Fleet + "/" + target.ID, WatchID: watch.ID}}, nil
}

// findDevice is the device id (of fleet, when given) the store knows.
func findDevice(devs []store.Device, fleet, id string) (*store.Device, error) {
	var found []*store.Device
	for i := range devs {
		if devs[i].ID == id && (fleet == "" || devs[i].Fleet == fleet) {
			found = append(found, &devs[i])
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("%w: no device %s is known%s", ErrNoDevices, escape.Printable(fleetDevice(fleet, id)), knownDevices(devs))
	case 1:
		return found[0], nil
	}
	return nil, fmt.Errorf("device %s is in several fleets: add --fleet", escape.Printable(id))
}

// targetHost checks that the URL's host is one of the addresses the target
// reports in its birth (a name: all its addresses are): the load goes to
// the device that watches itself, and nowhere else.
func targetHost(ctx context.Context, raw string, target *store.Device) error {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return fmt.Errorf("URL %q: want http://ADDRESS:PORT/ of the target", escape.Printable(raw))
	}
	var own []netip.Addr
	if target.Info != nil {
		for _, a := range target.Info.Addrs {
			if ip, err := netip.ParseAddr(a); err == nil {
				own = append(own, ip.Unmap())
			}
		}
	}
	name := fmt.Sprintf("%s/%s", target.Fleet, target.ID)
	if len(own) == 0 {
		return fmt.Errorf("the target %s reports no address in its birth (an agent older than two-machine runs?): its URL cannot be checked", escape.Printable(name))
	}
	list := make([]string, len(own))
	for i, a := range own {
		list[i] = a.String()
	}
	host := u.Hostname()
	addrs := []netip.Addr{}
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = append(addrs, ip.Unmap())
	} else {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		ips, err := net.DefaultResolver.LookupNetIP(rctx, "ip", host)
		if err != nil || len(ips) == 0 {
			return fmt.Errorf("URL host %s does not resolve here (%v): give the target's address, one of %s", escape.Printable(host), err, strings.Join(list, ", "))
		}
		for _, ip := range ips {
			addrs = append(addrs, ip.Unmap())
		}
	}
	for _, a := range addrs {
		if !slices.Contains(own, a.WithZone("")) {
			return fmt.Errorf("URL host %s (%s) is not an address of the target %s, which reports %s: a run across two devices loads its target and nothing else",
				escape.Printable(host), a, escape.Printable(name), strings.Join(list, ", "))
		}
	}
	return nil
}

// loadSpan is how long the load of req may take: as the agent bounds a
// command (its runs, each with its warm-up, a timeout's drain and the
// probe's edges; a capacity search its budget and its trials' drains).
// A run bounded by -n alone counts the agent's default cap, 10 minutes.
func loadSpan(req *scheduledb.TriggerRequest) time.Duration {
	ms := func(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
	lt := req.Spec
	drain := ms(max(lt.TimeoutMS, 2000)) + 5*time.Second
	if cp := req.Capacity; cp != nil {
		if cp.BudgetMS > 0 {
			return ms(cp.BudgetMS) + 40*drain
		}
		return 5 * time.Hour // the agent's caps: max_duration x max_repeat
	}
	one := ms(lt.DurationMS+lt.WarmupMS) + drain
	if lt.DurationMS == 0 {
		one = 10 * time.Minute
	}
	d := one * time.Duration(max(lt.Repeat, 1))
	if lt.RepeatAuto && lt.RepeatBudgetMS > 0 {
		d = min(d, ms(lt.RepeatBudgetMS)+one)
	}
	return d
}

// wakePair wakes the driver of the pair whose load or watch is command
// id, if this collector drives it.
func (c *Collector) wakePair(id string) {
	c.pairMu.Lock()
	w := c.pairs[id]
	c.pairMu.Unlock()
	if w != nil {
		select {
		case w <- struct{}{}:
		default:
		}
	}
}

// forget unregisters a pair's driver.
func (c *Collector) forget(d *pairDriver) {
	c.pairMu.Lock()
	delete(c.pairs, d.p.ID)
	delete(c.pairs, d.p.WatchID)
	c.pairMu.Unlock()
}

// endPair ends pair id in state with reason, unless it ended already.
func (c *Collector) endPair(ctx context.Context, id, state, reason string) bool {
	var ok bool
	err := storeCall(ctx, c.cfg.storeTimeout, func(ctx context.Context) (err error) {
		ok, err = c.store.SetPairState(ctx, id, state, reason)
		return err
	})
	if err != nil {
		c.log.Error("run across two devices: not ended", zap.String("pair", id), zap.String("state", state), zap.String("reason", reason), zap.Error(err))
	} else if ok {
		c.log.Info("run across two devices ended", zap.String("pair", id), zap.String("state", state), zap.String("reason", reason))
	}
	return ok
}

// sweepPairs fails the pairs past their deadline, every sweepEvery,
// whichever collector drove them: one that stopped left them.
func (c *Collector) sweepPairs() {
	defer c.wg.Done()
	t := time.NewTicker(sweepEvery)
	defer t.Stop()
	for {
		err := storeCall(c.ctx, c.cfg.storeTimeout, func(ctx context.Context) error {
			over, err := c.store.FailOverduePairs(ctx, time.Now(), "not ended by its deadline: the collector that drove it stopped")
			for _, p := range over {
				c.log.Warn("run across two devices failed: past its deadline", zap.String("pair", p.ID))
			}
			return err
		})
		if err != nil && c.ctx.Err() == nil {
			c.log.Error("pairs past their deadline", zap.Error(err))
		}
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// cancelPair asks the pair's driver to cancel both devices' commands.
func (c *Collector) cancelPair(ctx context.Context, p *store.Pair) (*Triggered, error) {
	ok, err := c.store.CancelPair(ctx, p.ID)
	if err != nil {
		return nil, fmt.Errorf("cancel: %w", err)
	}
	if !ok {
		return nil, fmt.Errorf("cancel: the run across two devices %s is %w: it %s", escape.Printable(p.ID), store.ErrNotRunning, p.State)
	}
	c.wakePair(p.ID)
	return &Triggered{CommandID: p.ID, Devices: []string{p.Fleet + "/" + p.Loader, p.TargetFleet + "/" + p.Target}}, nil
}

// pairDriver drives one pair: see the top of this file.
type pairDriver struct {
	c           *Collector
	p           store.Pair
	load, watch *wire.Command
	labels      []wire.Label // the load's: the joined result carries them
	ttl         time.Duration
	wake        chan struct{}
	log         *zap.Logger

	loader, target wire.Addr
	started        time.Time // the watch sent
	loadSent       bool
	loadEnded      time.Time
	state          string

	watchSeen, loadSeen deviceEvents
	marks               int    // window edges relayed
	missing             string // which result the join waits for
}

// deviceEvents is what the driver read of one device's events of one
// command, in their order.
type deviceEvents struct {
	seq       uint32    // the last read
	gapSince  time.Time // when a gap after seq was first seen
	running   bool
	final     *store.Event // its terminal event
	lastState wire.EventState
}

// read takes the events after the last read, in sequence: an event
// missing from it is waited for up to gapWait, then passed over. Each one
// taken is handed to each, in order.
func (e *deviceEvents) read(evs []store.Event, each func(store.Event)) {
	for _, ev := range evs {
		if ev.Seq != e.seq+1 && ev.Seq != wire.SeqInterrupted {
			if e.gapSince.IsZero() {
				e.gapSince = time.Now()
			}
			if time.Since(e.gapSince) < gapWait {
				return
			}
		}
		e.gapSince = time.Time{}
		e.seq = ev.Seq
		e.lastState = ev.State
		if ev.State == wire.StateRunning {
			e.running = true
		}
		if ev.State.Terminal() && e.final == nil {
			final := ev
			e.final = &final
		}
		if each != nil {
			each(ev)
		}
	}
}

// run drives the pair until it ends or the collector stops.
func (d *pairDriver) run(ctx context.Context) {
	d.state = store.PairWatching
	t := time.NewTicker(pairTick)
	defer t.Stop()
	for {
		done, err := d.step(ctx)
		if done {
			return
		}
		if err != nil && ctx.Err() == nil {
			d.log.Warn("run across two devices: the store", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			d.c.endPair(context.Background(), d.p.ID, store.PairFailed, "the collector stopped during the run")
			return
		case <-d.wake:
		case <-t.C:
		}
	}
}

// step looks at the pair once and moves it on; done when it ended.
func (d *pairDriver) step(ctx context.Context) (done bool, err error) {
	c := d.c
	var p *store.Pair
	err = storeCall(ctx, c.cfg.storeTimeout, func(ctx context.Context) (err error) {
		p, err = c.store.Pair(ctx, d.p.ID)
		return err
	})
	if err != nil {
		return false, err
	}
	if store.PairDone(p.State) { // ended elsewhere: past its deadline
		return true, nil
	}
	if p.Cancel {
		d.cancelBoth(ctx)
		return d.end(ctx, store.PairCancelled, "cancelled: both devices were told to stop"), nil
	}
	if err := d.readEvents(ctx); err != nil {
		return false, err
	}
	tname, lname := d.target.Fleet+"/"+d.target.Device, d.loader.Fleet+"/"+d.loader.Device
	w, l := d.watchSeen.final, d.loadSeen.final
	switch d.state {
	case store.PairWatching:
		switch {
		case w != nil:
			return d.fail(ctx, fmt.Sprintf("the target %s %s the watch%s", tname, w.State, because(w.Reason)))
		case d.watchSeen.running:
			return d.sendLoad(ctx)
		case time.Since(d.started) > c.cfg.pairTimes.watchStart:
			d.cancelBoth(ctx)
			return d.fail(ctx, fmt.Sprintf("the watch on the target %s did not start within %v (%s)", tname, c.cfg.pairTimes.watchStart, d.lastWord(d.watchSeen)))
		}
		if why, err := d.offline(ctx, d.target, "target"); err != nil || why != "" {
			if why != "" {
				d.cancelBoth(ctx)
				return d.fail(ctx, why+": the watch never started")
			}
			return false, err
		}
	case store.PairLoading:
		switch {
		case l != nil && l.State == wire.StateSucceeded:
			mark := d.mark(wire.MarkDone, 0)
			if _, err := c.send(ctx, d.target.Fleet, d.target.Device, mark); err != nil {
				d.cancelBoth(ctx)
				return d.fail(ctx, "the end of the load could not be sent to the target: "+err.Error())
			}
			d.loadEnded = time.Now()
			return d.moveTo(ctx, store.PairJoining)
		case l != nil:
			d.cancelBoth(ctx)
			return d.fail(ctx, fmt.Sprintf("the loader %s %s the load%s", lname, l.State, because(l.Reason)))
		case w != nil:
			d.cancelBoth(ctx)
			return d.fail(ctx, fmt.Sprintf("the watch on the target %s ended (%s%s) before the load did", tname, w.State, because(w.Reason)))
		}
		for _, side := range []struct {
			a    wire.Addr
			what string
		}{{d.target, "target"}, {d.loader, "loader"}} {
			why, err := d.offline(ctx, side.a, side.what)
			if err != nil {
				return false, err
			}
			if why != "" {
				d.cancelBoth(ctx)
				return d.fail(ctx, why+" during the run")
			}
		}
	case store.PairJoining:
		if w != nil && w.State != wire.StateSucceeded {
			return d.fail(ctx, fmt.Sprintf("the watch on the target %s %s%s", tname, w.State, because(w.Reason)))
		}
		if w != nil {
			if done, err := d.join(ctx); done || err != nil {
				return done, err
			}
		}
		if w == nil { // the watch not ended yet: its target must be there to end it
			why, err := d.offline(ctx, d.target, "target")
			if err != nil {
				return false, err
			}
			if why != "" {
				return d.fail(ctx, why+" before its watch ended")
			}
		}
		if time.Since(d.loadEnded) > c.cfg.pairTimes.join {
			missing := d.missing
			if w == nil {
				missing = "the end of the target's watch"
			}
			return d.fail(ctx, fmt.Sprintf("%s did not reach the collector within %v of the load's end", missing, c.cfg.pairTimes.join))
		}
	}
	if time.Now().After(p.Deadline) {
		d.cancelBoth(ctx)
		return d.fail(ctx, fmt.Sprintf("not ended by its deadline (%s): the devices said nothing more", p.Deadline.Local().Format(time.TimeOnly)))
	}
	return false, nil
}

// readEvents reads what both devices said since the last look, and relays
// the loader's window edges to the watch as marks.
func (d *pairDriver) readEvents(ctx context.Context) error {
	c := d.c
	var wevs, levs []store.Event
	err := storeCall(ctx, c.cfg.storeTimeout, func(ctx context.Context) (err error) {
		if wevs, err = c.store.EventsAfter(ctx, d.watch.ID, d.target.Fleet, d.target.Device, d.watchSeen.seq); err != nil || !d.loadSent {
			return err
		}
		levs, err = c.store.EventsAfter(ctx, d.load.ID, d.loader.Fleet, d.loader.Device, d.loadSeen.seq)
		return err
	})
	if err != nil {
		return err
	}
	d.watchSeen.read(wevs, nil)
	var sendErr error
	d.loadSeen.read(levs, func(ev store.Event) {
		if ev.Window == nil || sendErr != nil || d.watchSeen.final != nil {
			return
		}
		if _, sendErr = c.send(ctx, d.target.Fleet, d.target.Device, d.mark(ev.Window.Edge, ev.Window.Run)); sendErr == nil {
			d.marks++
		}
	})
	if sendErr != nil {
		d.log.Warn("run across two devices: a mark not sent", zap.Error(sendErr))
	}
	return nil
}

// mark is a mark of the watch: an edge of the load's run, or done.
func (d *pairDriver) mark(edge string, run int) *wire.Command {
	now := time.Now().UTC()
	return &wire.Command{V: wire.SchemaVersion, ID: wire.NewID(), IssuedAt: now, ExpiresAt: now.Add(markTTL), Kind: wire.KindMark,
		Spec: wire.CommandSpec{Mark: &wire.MarkSpec{CommandID: d.watch.ID, Run: run, Edge: edge}}}
}

// sendLoad sends the load to the loader, the watch running.
func (d *pairDriver) sendLoad(ctx context.Context) (bool, error) {
	now := time.Now().UTC()
	d.load.IssuedAt, d.load.ExpiresAt = now, now.Add(d.ttl)
	if _, err := d.c.send(ctx, d.loader.Fleet, d.loader.Device, d.load); err != nil {
		d.cancelBoth(ctx)
		return d.fail(ctx, "the load could not be sent to the loader: "+err.Error())
	}
	d.loadSent = true
	d.log.Info("run across two devices: the watch runs, load sent")
	return d.moveTo(ctx, store.PairLoading)
}

// join joins both results once they are kept, and stores the joined one
// with the pair's end; a join that fails fails the pair.
func (d *pairDriver) join(ctx context.Context) (bool, error) {
	c := d.c
	var parts []store.PairPart
	err := storeCall(ctx, c.cfg.storeTimeout, func(ctx context.Context) (err error) {
		parts, err = c.store.PairParts(ctx, d.p.ID)
		return err
	})
	if err != nil {
		return false, err
	}
	lr := part(parts, store.RoleLoader, d.loadSeen.final.ResultID)
	tr := part(parts, store.RoleTarget, d.watchSeen.final.ResultID)
	switch {
	case lr == nil && tr == nil:
		d.missing = "both results"
	case lr == nil:
		d.missing = "the loader's result"
	case tr == nil:
		d.missing = "the target's result"
	}
	if lr == nil || tr == nil {
		return false, nil
	}
	j, err := join.Join(lr, tr, d.labels)
	if err != nil {
		return d.fail(ctx, err.Error())
	}
	raw, err := j.MarshalMsg(nil)
	if err != nil {
		return d.fail(ctx, "the joined result: "+err.Error())
	}
	var ok bool
	err = storeCall(ctx, c.cfg.storeTimeout, func(ctx context.Context) (err error) {
		ok, err = c.store.FinishPair(ctx, d.p.ID, store.Incoming{Result: j, Raw: raw, Received: time.Now()})
		return err
	})
	switch {
	case err != nil && sqldb.Unavailable(err):
		return false, err
	case err != nil:
		return d.fail(ctx, "the joined result not stored: "+err.Error())
	case ok:
		c.stored.Add(1)
		d.log.Info("run across two devices joined and stored", zap.String("result", j.ID), zap.Int("runs", len(j.Runs)), zap.Int("marks", d.marks))
	}
	return true, nil
}

// part is the kept result of role whose id is id (any of role when id is
// unknown), the last received.
func part(parts []store.PairPart, role, id string) *wire.Result {
	var out *wire.Result
	for _, p := range parts {
		if p.Role == role && (id == "" || p.Result.ID == id) {
			out = p.Result
		}
	}
	return out
}

// offline says why device a (the pair's what) cannot go on: it is
// offline or lost; "" when it is online.
func (d *pairDriver) offline(ctx context.Context, a wire.Addr, what string) (string, error) {
	var online, found bool
	var state string
	err := storeCall(ctx, d.c.cfg.storeTimeout, func(ctx context.Context) (err error) {
		online, state, found, err = d.c.store.DeviceOnline(ctx, a.Fleet, a.Device)
		return err
	})
	if err != nil || online {
		return "", err
	}
	if !found {
		state = "unknown"
	}
	return fmt.Sprintf("the %s %s/%s went offline (%s)", what, a.Fleet, a.Device, orWord(state, "no status")), nil
}

// cancelBoth sends a cancel to each device still running its command.
func (d *pairDriver) cancelBoth(ctx context.Context) {
	for _, c := range []struct {
		a    wire.Addr
		cmd  *wire.Command
		seen deviceEvents
		sent bool
	}{{d.target, d.watch, d.watchSeen, true}, {d.loader, d.load, d.loadSeen, d.loadSent}} {
		if !c.sent || c.seen.final != nil {
			continue
		}
		now := time.Now().UTC()
		cancel := &wire.Command{V: wire.SchemaVersion, ID: wire.NewID(), IssuedAt: now, ExpiresAt: now.Add(time.Minute),
			Kind: wire.KindCancel, Spec: wire.CommandSpec{Cancel: &wire.CancelSpec{CommandID: c.cmd.ID}}}
		if _, err := d.c.send(ctx, c.a.Fleet, c.a.Device, cancel); err != nil {
			d.log.Warn("run across two devices: a cancel not sent", zap.String("to", c.a.Fleet+"/"+c.a.Device), zap.Error(err))
		}
	}
}

// moveTo moves the pair to state; not done.
func (d *pairDriver) moveTo(ctx context.Context, state string) (bool, error) {
	var ok bool
	err := storeCall(ctx, d.c.cfg.storeTimeout, func(ctx context.Context) (err error) {
		ok, err = d.c.store.SetPairState(ctx, d.p.ID, state, "")
		return err
	})
	if err != nil {
		return false, err
	}
	d.state = state
	return !ok, nil // ended meanwhile: done
}

// fail ends the pair as failed with why; done.
func (d *pairDriver) fail(ctx context.Context, why string) (bool, error) {
	return d.end(ctx, store.PairFailed, why), nil
}

func (d *pairDriver) end(ctx context.Context, state, why string) bool {
	d.c.endPair(context.WithoutCancel(ctx), d.p.ID, state, why)
	return true
}

// lastWord is what a device last said of its command, for a reason.
func (d *pairDriver) lastWord(e deviceEvents) string {
	if e.lastState == "" {
		return "it did not answer"
	}
	return "its last word: " + string(e.lastState)
}

// because is ": why", or "" without a reason.
func because(why string) string {
	if why == "" {
		return ""
	}
	return ": " + why
}

func orWord(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// storePart keeps a device's result for the pair it belongs to, apart
// from the results, and wakes the pair's driver.
func (c *Collector) storePart(ctx context.Context, pair, role string, r *wire.Result, raw []byte) error {
	var fresh bool
	err := c.whileUnavailable(ctx, func() error {
		return storeCall(ctx, c.cfg.storeTimeout, func(ctx context.Context) (err error) {
			fresh, err = c.store.AddPairPart(ctx, pair, role, store.Incoming{Result: r, Raw: raw, Received: time.Now()})
			return err
		})
	})
	if err != nil {
		c.failed.Add(1)
		return err
	}
	if fresh {
		c.parts.Add(1)
	} else {
		c.duplicates.Add(1)
	}
	c.wakePair(pair)
	return nil
}

// joinedByDeviceWhy is why the collector refuses a device's result that
// carries what only the collector writes: a loader.
const joinedByDeviceWhy = "a device's result carries a loader: only the collector joins a run across two devices"

// joinedByDevice says whether a device's result r claims to be a joined
// one.
func joinedByDevice(r *wire.Result) bool {
	if r.Loader != nil {
		return true
	}
	for i := range r.Runs {
		if r.Runs[i].Loader != nil {
			return true
		}
	}
	return false
}
