package collector

// This file is the ingest: what the collector does with each message the
// fleet publishes. Results are batched into one transaction and acked
// after their commit; statuses and events are stored as they come;
// heartbeats are kept in memory and written every heartbeatFlush.

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/sqldb"
	"github.com/edgebench/edgebench/transport"
	"github.com/edgebench/edgebench/wire"
)

// heartbeatFlush is how often the latest heartbeats are written, in one
// transaction.
const heartbeatFlush = time.Second

// ingestReq is a result waiting for the batcher, and where its handler
// waits for the commit.
type ingestReq struct {
	in   store.Incoming
	done chan error // buffered 1
}

// onResult hands a result, with the payload it came in, to the batcher
// and waits for its commit: the Subscriber acks it when this returns nil.
func (c *Collector) onResult(ctx context.Context, from wire.Addr, r *wire.Result, raw []byte) error {
	part, why, err := c.refuse(ctx, from, r, raw)
	if err != nil {
		return err
	} else if why != "" {
		c.refused.Add(1)
		c.drops.note("result refused", zap.String("reason", why), zap.String("result_id", r.ID),
			zap.String("fleet", from.Fleet), zap.String("device", from.Device))
		return fmt.Errorf("%s: %w", why, transport.ErrRejected)
	}
	if part.pair != "" { // a run across two devices: kept apart until joined
		return c.storePart(ctx, part.pair, part.role, r, raw)
	}
	req := ingestReq{in: store.Incoming{Result: r, Raw: raw, Received: time.Now()}, done: make(chan error, 1)}
	req.in.Prepare()
	select {
	case c.ingest <- req:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.ctx.Done():
		return c.ctx.Err()
	}
	select {
	case err := <-req.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// pairPart is, for a result of a run across two devices, its pair and
// its role in it (store.RoleLoader, store.RoleTarget); zero otherwise.
type pairPart struct{ pair, role string }

// refuse says why the collector refuses the result r of the device from
// for good, "" when it takes it: a device time that is absurd, a quota
// it is over (broker.Quotas), a command named that was not sent to that
// device, or a loader, which only the collector's joined results carry.
// A result of a command of a run across two devices is that run's part.
// An error is the store's, to try again.
func (c *Collector) refuse(ctx context.Context, from wire.Addr, r *wire.Result, raw []byte) (pairPart, string, error) {
	from = wire.Addr{Fleet: from.Fleet, Device: from.Device} // the device, whatever the topic
	now := time.Now()
	if why := absurdTime(r, now); why != "" {
		return pairPart{}, why, nil
	}
	if joinedByDevice(r) {
		return pairPart{}, joinedByDeviceWhy, nil
	}
	if why := c.quotas.Of(from).Shape(r); why != "" {
		return pairPart{}, why, nil
	}
	why, err := c.quotas.Take(ctx, from, int64(len(raw)), now)
	if why != "" || err != nil {
		return pairPart{}, why, err
	}
	var part pairPart
	if r.CommandID != "" {
		var ok bool
		err := c.whileUnavailable(ctx, func() (err error) {
			ok, part.pair, part.role, err = c.store.CommandSentToPair(ctx, r.CommandID, from.Fleet, from.Device)
			return err
		})
		if err != nil {
			return pairPart{}, "", err
		}
		if !ok {
			return pairPart{}, fmt.Sprintf("command %s was not sent to %s/%s", wire.Clip(r.CommandID), from.Fleet, from.Device), nil
		}
	}
	return part, "", nil
}

// Device times the collector takes: none before 2020, none more than
// maxAhead after its own clock. Past them a device's clock is wrong (or
// lying), and the time would not fit the store (ns since 1970 in 64 bits
// hold 1678 to 2262).
var earliestTime = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

const maxAhead = 24 * time.Hour

// absurdTime says which of r's times is absurd at the collector's time
// now, "" when none: its creation, or a run's start.
func absurdTime(r *wire.Result, now time.Time) string {
	check := func(what string, t time.Time) string { return absurdAt(what, t, now) }
	if why := check("created_at", r.CreatedAt); why != "" {
		return why
	}
	for i := range r.Runs {
		if t := r.Runs[i].StartedAt; !t.IsZero() {
			if why := check(fmt.Sprintf("run %d started_at", i+1), t); why != "" {
				return why
			}
		}
	}
	return ""
}

// absurdAt says why the device time t of what is absurd at the
// collector's time now, "" when it is not.
func absurdAt(what string, t, now time.Time) string {
	switch {
	case t.Before(earliestTime):
		return fmt.Sprintf("%s %s is before %d: the device's clock is wrong", what, t.UTC().Format(time.RFC3339), earliestTime.Year())
	case t.After(now.Add(maxAhead)):
		return fmt.Sprintf("%s %s is more than %v ahead of the collector's clock (%s)", what, t.UTC().Format(time.RFC3339),
			maxAhead, now.UTC().Format(time.RFC3339))
	}
	return ""
}

// errTaken refuses a result whose id is another device's result.
var errTaken = fmt.Errorf("result id is another device's result: %w", transport.ErrRejected)

// batcher commits results in batches: it takes what is waiting, up to
// BatchMax, in one transaction, so that many devices' results share one
// fsync, and answers each handler after the commit.
func (c *Collector) batcher() {
	defer c.wg.Done()
	batch := make([]ingestReq, 0, c.cfg.BatchMax)
	in := make([]store.Incoming, 0, c.cfg.BatchMax)
	for {
		batch, in = batch[:0], in[:0]
		select {
		case r := <-c.ingest:
			batch = append(batch, r)
		case <-c.ctx.Done():
			return
		}
	fill:
		for len(batch) < c.cfg.BatchMax {
			select {
			case r := <-c.ingest:
				batch = append(batch, r)
			default:
				break fill
			}
		}
		for _, r := range batch {
			in = append(in, r.in)
		}
		c.commit(batch, in)
	}
}

// commit stores a batch and answers each of its handlers. While the store
// is unavailable (a PostgreSQL restart) it tries again, holding the batch
// and the handlers. Should the store fail otherwise, or panic (a bug, or
// data the decoder should not have let through), the batch is stored
// again one result at a time, so that only the result it fails or panics
// on fails: that one is logged, counted and not acked, and the ingest goes
// on.
func (c *Collector) commit(batch []ingestReq, in []store.Incoming) {
	var fresh []store.IngestState
	err := c.whileUnavailable(c.ctx, func() (err error) {
		fresh, err = c.ingestRecover(in)
		return err
	})
	var p *panicError
	if err != nil && len(batch) > 1 && c.ctx.Err() == nil && !sqldb.Unavailable(err) {
		c.log.Debug("ingest failed: storing the batch one result at a time", zap.Int("results", len(batch)), zap.Error(err))
		for i := range batch {
			c.commit(batch[i:i+1], in[i:i+1])
		}
		return
	}
	if errors.As(err, &p) {
		if n := c.panics.Add(1); n&(n-1) == 0 { // log the 1st, 2nd, 4th, ...
			c.log.Error("result not stored: the store panicked on it", zap.String("result_id", in[0].Result.ID),
				zap.Any("panic", p.v), zap.Int64("panics", n), zap.ByteString("stack", p.stack))
		}
	}
	for i, r := range batch {
		err := err
		switch {
		case err != nil:
			c.failed.Add(1)
		case fresh[i] == store.IngestNew:
			c.stored.Add(1)
		case fresh[i] == store.IngestTaken:
			c.refused.Add(1)
			c.drops.note("result refused", zap.String("reason", "result id is another device's result"),
				zap.String("result_id", in[i].Result.ID), zap.String("fleet", in[i].Result.Fleet), zap.String("device", in[i].Result.Device))
			err = errTaken
		default:
			c.duplicates.Add(1)
		}
		r.done <- err
	}
	if err != nil && p == nil {
		c.log.Error("ingest batch", zap.Int("results", len(batch)), zap.Error(err))
	}
}

// whileUnavailable runs f, and again while its error says the store is
// unavailable (Unavailable), waiting longer each time up to 2 s, until f
// succeeds or fails otherwise, or ctx or the collector ends. The store's
// going and coming back are logged once each.
func (c *Collector) whileUnavailable(ctx context.Context, f func() error) error {
	wait := 50 * time.Millisecond
	for {
		err := f()
		c.downMu.Lock()
		switch {
		case sqldb.Unavailable(err) && c.downSince.IsZero():
			c.downSince = time.Now()
			c.log.Warn("store unavailable: holding what comes in, trying again", zap.Error(err))
		case !sqldb.Unavailable(err) && !c.downSince.IsZero():
			c.log.Info("store available again", zap.Duration("after", time.Since(c.downSince)))
			c.downSince = time.Time{}
		}
		c.downMu.Unlock()
		if !sqldb.Unavailable(err) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		case <-c.ctx.Done():
			t.Stop()
			return err
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// panicError is a panic turned into an error, with where it happened.
type panicError struct {
	v     any
	stack []byte
}

func (p *panicError) Error() string { return fmt.Sprintf("panic: %v", p.v) }

// ingestRecover is Store.Ingest with a panic turned into a *panicError.
func (c *Collector) ingestRecover(in []store.Incoming) (fresh []store.IngestState, err error) {
	defer c.metrics.ObserveIngest(len(in), time.Now())
	defer func() {
		if v := recover(); v != nil {
			fresh, err = nil, fmt.Errorf("ingest: %w", &panicError{v: v, stack: debug.Stack()})
		}
	}()
	err = storeCall(c.ctx, c.cfg.storeTimeout, func(ctx context.Context) error {
		fresh, err = c.store.IngestStates(ctx, in)
		return err
	})
	return fresh, err
}

func (c *Collector) addr(topic string) (wire.Addr, bool) {
	a, err := wire.Topics{Prefix: c.cfg.Prefix}.Parse(topic)
	if err != nil {
		c.drops.note("message on a bad topic dropped", zap.String("topic", wire.Clip(topic)), zap.Error(err))
		return a, false
	}
	return a, true
}

func (c *Collector) onStatus(ctx context.Context, topic string, b []byte) {
	a, ok := c.addr(topic)
	if !ok {
		return
	}
	if len(b) == 0 { // a cleared retained message
		return
	}
	st, err := wire.DecodeStatus(b)
	if err != nil {
		c.drops.note("status dropped", zap.String("topic", topic), zap.Error(err))
		return
	}
	if err := c.whileUnavailable(ctx, func() error {
		return storeCall(ctx, c.cfg.storeTimeout, func(ctx context.Context) error {
			_, err := c.store.SetStatus(ctx, a.Fleet, a.Device, st)
			return err
		})
	}); err != nil {
		c.log.Error("status not stored", zap.Error(err))
	}
}

func (c *Collector) onEvent(ctx context.Context, topic string, b []byte) {
	a, ok := c.addr(topic)
	if !ok {
		return
	}
	ev, err := wire.DecodeEvent(b)
	if err != nil {
		c.drops.note("event dropped", zap.String("topic", topic), zap.Error(err))
		return
	}
	if ok, err := c.takeEvent(ctx, a, ev, len(b)); !ok {
		if err != nil {
			c.log.Error("event not stored", zap.Error(err))
		}
		return
	}
	if err := c.whileUnavailable(ctx, func() error {
		return storeCall(ctx, c.cfg.storeTimeout, func(ctx context.Context) error { return c.store.AddEvent(ctx, a.Fleet, a.Device, ev) })
	}); err != nil {
		c.log.Error("event not stored", zap.Error(err))
	}
	c.wakePair(ev.CommandID) // a run across two devices this collector drives reads it now
}

func (c *Collector) onHeartbeat(ctx context.Context, topic string, b []byte) {
	a, ok := c.addr(topic)
	if !ok {
		return
	}
	hb, err := wire.DecodeHeartbeat(b)
	if err != nil {
		c.drops.note("heartbeat dropped", zap.String("topic", topic), zap.Error(err))
		return
	}
	// Heartbeats are ordered by their own time: one from a clock far ahead
	// (or out of range of the store's ns) would hold back every later one.
	if why := absurdAt("at", hb.At, time.Now()); why != "" {
		c.drops.note("heartbeat dropped", zap.String("topic", topic), zap.String("reason", why))
		return
	}
	// Handlers run on many workers, so heartbeats can come out of
	// order: an older one must not replace a newer one.
	c.hbMu.Lock()
	if c.heartbeat == nil {
		c.heartbeat = map[wire.Addr]*wire.Heartbeat{}
	}
	if c.hbAt == nil {
		c.hbAt = map[wire.Addr]time.Time{}
	}
	if last, ok := c.hbAt[a]; !ok || !hb.At.Before(last) {
		c.hbAt[a] = hb.At
		c.heartbeat[a] = hb
	}
	c.hbMu.Unlock()
}

// heartbeats writes the latest heartbeats every heartbeatFlush, and once
// more when the collector stops.
func (c *Collector) heartbeats() {
	defer c.wg.Done()
	t := time.NewTicker(heartbeatFlush)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-c.ctx.Done():
		}
		c.drops.flush(c.ctx.Err() != nil)
		c.hbMu.Lock()
		hbs := c.heartbeat
		c.heartbeat = nil
		c.hbMu.Unlock()
		// The last flush, once the collector stops, has its deadline
		// all the same.
		err := storeCall(context.WithoutCancel(c.ctx), c.cfg.storeTimeout, func(ctx context.Context) error { return c.store.SetHeartbeats(ctx, hbs) })
		if err != nil {
			c.log.Error("heartbeats not stored", zap.Int("devices", len(hbs)), zap.Error(err))
		}
		if c.ctx.Err() != nil {
			return
		}
	}
}
