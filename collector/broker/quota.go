package broker

// Quotas: what one device may make the collector store. A device with a
// valid account could otherwise fill the disk and the collector's memory
// (3,000 results of 195 KB took the RSS from 456 to 1,199 MB and the
// SQLite file to 1.9 GB) and slow every other device's ingest.

import (
	"context"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/edgebench/edgebench/wire"
)

// Quota bounds what one device may store. In the accounts file, quota:
// at the top sets every device's, a device's own quota: overrides it field
// by field; a field left out (zero) takes DefaultQuota's, -1 lifts it.
type Quota struct {
	// MaxResultBytes bounds one result's size after decoding (as the
	// collector re-encodes and keeps it: msgp's bound of the decoded
	// result, which counts every element a short payload can unfold to).
	MaxResultBytes int64 `yaml:"max_result_bytes"`
	MaxLabels      int   `yaml:"max_labels"`      // labels of one result
	MaxLabelBytes  int   `yaml:"max_label_bytes"` // a label's key, and its value
	// ResultsPerMinute is the rate of results taken, with bursts of up to
	// BurstResults (room for a spool replayed after an outage).
	ResultsPerMinute int `yaml:"results_per_minute"`
	BurstResults     int `yaml:"burst_results"`
	// BytesPerDay bounds the payload bytes taken in the last 24 hours,
	// results' and events' together.
	BytesPerDay int64 `yaml:"bytes_per_day"`
	// EventsPerMinute is the rate of command events taken, with bursts of
	// up to BurstEvents (room for the events a device kept while
	// disconnected: its outbox holds 4,096).
	EventsPerMinute int `yaml:"events_per_minute"`
	BurstEvents     int `yaml:"burst_events"`
	// MaxReasonBytes bounds the reason an event keeps: a longer one is
	// cut there.
	MaxReasonBytes int `yaml:"max_reason_bytes"`
}

// DefaultQuota is every device's quota unless the accounts file says
// otherwise.
func DefaultQuota() Quota {
	return Quota{
		MaxResultBytes:   2 << 20,
		MaxLabels:        32,
		MaxLabelBytes:    256,
		ResultsPerMinute: 120,
		BurstResults:     1000,
		BytesPerDay:      128 << 20,
		EventsPerMinute:  120,
		BurstEvents:      4096,
		MaxReasonBytes:   1024,
	}
}

// over is q with the non-zero fields of o.
func (q Quota) over(o *Quota) Quota {
	if o == nil {
		return q
	}
	set := func(dst *int64, v int64) {
		if v != 0 {
			*dst = v
		}
	}
	seti := func(dst *int, v int) {
		if v != 0 {
			*dst = v
		}
	}
	set(&q.MaxResultBytes, o.MaxResultBytes)
	seti(&q.MaxLabels, o.MaxLabels)
	seti(&q.MaxLabelBytes, o.MaxLabelBytes)
	seti(&q.ResultsPerMinute, o.ResultsPerMinute)
	seti(&q.BurstResults, o.BurstResults)
	set(&q.BytesPerDay, o.BytesPerDay)
	seti(&q.EventsPerMinute, o.EventsPerMinute)
	seti(&q.BurstEvents, o.BurstEvents)
	seti(&q.MaxReasonBytes, o.MaxReasonBytes)
	return q
}

func (q Quota) check() error {
	for _, f := range []struct {
		name string
		v    int64
	}{{"max_result_bytes", q.MaxResultBytes}, {"max_labels", int64(q.MaxLabels)}, {"max_label_bytes", int64(q.MaxLabelBytes)},
		{"results_per_minute", int64(q.ResultsPerMinute)}, {"burst_results", int64(q.BurstResults)}, {"bytes_per_day", q.BytesPerDay},
		{"events_per_minute", int64(q.EventsPerMinute)}, {"burst_events", int64(q.BurstEvents)}, {"max_reason_bytes", int64(q.MaxReasonBytes)}} {
		if f.v < -1 {
			return fmt.Errorf("quota %s %d: want a positive number, or -1 for none", f.name, f.v)
		}
	}
	return nil
}

// checkQuotas checks the accounts file's quotas.
func (a *Accounts) checkQuotas() error {
	if err := a.Quota.check(); err != nil {
		return err
	}
	for _, d := range a.Devices {
		if d.Quota != nil {
			if err := d.Quota.check(); err != nil {
				return fmt.Errorf("device %s/%s: %w", d.Fleet, d.ID, err)
			}
		}
	}
	return nil
}

// QuotaOf returns the quota of each device of a (DefaultQuota for all
// when a is nil: an external broker's devices).
func QuotaOf(a *Accounts) func(wire.Addr) Quota {
	if a == nil {
		return func(wire.Addr) Quota { return DefaultQuota() }
	}
	all := DefaultQuota().over(&a.Quota)
	own := map[wire.Addr]Quota{}
	for _, d := range a.Devices {
		own[wire.Addr{Fleet: d.Fleet, Device: d.ID}] = all.over(d.Quota)
	}
	return func(at wire.Addr) Quota {
		if q, ok := own[at]; ok {
			return q
		}
		return all
	}
}

// limited reports whether a bound is set (-1 lifts it).
func limited[T int | int64](v T) bool { return v > 0 }

// Shape says why r does not fit q, "" when it does: its labels, its
// decoded size.
func (q Quota) Shape(r *wire.Result) string {
	if limited(q.MaxLabels) && len(r.Labels) > q.MaxLabels {
		return fmt.Sprintf("quota: %d labels, over this device's %d", len(r.Labels), q.MaxLabels)
	}
	if limited(q.MaxLabelBytes) {
		for k, v := range r.Labels {
			if len(k) > q.MaxLabelBytes || len(v) > q.MaxLabelBytes {
				return fmt.Sprintf("quota: label %q of %d+%d bytes, over this device's %d for a key or a value",
					wire.Clip(k), len(k), len(v), q.MaxLabelBytes)
			}
		}
	}
	if limited(q.MaxResultBytes) {
		if n := int64(r.Msgsize()); n > q.MaxResultBytes {
			return fmt.Sprintf("quota: result of %d bytes decoded, over this device's %d", n, q.MaxResultBytes)
		}
	}
	return ""
}

// usage is what one device took lately.
type usage struct {
	ready   chan struct{} // closed once the fields below are set
	err     error         // the store's, reading the device's day: set before ready
	results bucket        // results it may send now: BurstResults, ResultsPerMinute a minute
	events  bucket        // events it may send now: BurstEvents, EventsPerMinute a minute
	hours   [24]int64     // payload bytes taken in each of the last 24 hours, by hour % 24
	hour    int64         // the hour (Unix hours) of hours' newest slot
}

// bucket is a token bucket: tokens at time at.
type bucket struct {
	tokens float64
	at     time.Time
}

// refill adds perMinute tokens a minute since the last refill, up to
// burst, and reports whether a whole token is there.
func (b *bucket) refill(now time.Time, perMinute, burst int) bool {
	b.tokens = min(float64(max(burst, 1)), b.tokens+now.Sub(b.at).Minutes()*float64(perMinute))
	b.at = now
	return b.tokens >= 1
}

// Quotas keeps each device's usage against its quota, for the ingest.
type Quotas struct {
	of func(wire.Addr) Quota
	// since reads the payload bytes a device's results stored since a
	// time, when the collector first hears of it: a restart does not
	// give a device a new day.
	since func(ctx context.Context, a wire.Addr, t time.Time) (int64, error)

	mu  sync.Mutex
	use map[wire.Addr]*usage
}

// NewQuotas keeps the usage of each device against its quota of: since
// reads the payload bytes a device's results stored since a time, when
// the collector first hears of it (a restart does not give a device a
// new day).
func NewQuotas(of func(wire.Addr) Quota, since func(ctx context.Context, a wire.Addr, t time.Time) (int64, error)) *Quotas {
	return &Quotas{of: of, since: since, use: map[wire.Addr]*usage{}}
}

// Of is device a's quota.
func (qs *Quotas) Of(a wire.Addr) Quota { return qs.of(a) }

// Take charges a result of n payload bytes to device a at now, or says
// which quota it is over ("" when taken). An error is the store's.
func (qs *Quotas) Take(ctx context.Context, a wire.Addr, n int64, now time.Time) (string, error) {
	return qs.take(ctx, a, n, now, false)
}

// TakeEvent charges a command event of n payload bytes to device a at
// now, as Take does a result: against the device's rate of events and
// its bytes of the day, which results and events share.
func (qs *Quotas) TakeEvent(ctx context.Context, a wire.Addr, n int64, now time.Time) (string, error) {
	return qs.take(ctx, a, n, now, true)
}

func (qs *Quotas) take(ctx context.Context, a wire.Addr, n int64, now time.Time, event bool) (string, error) {
	q := qs.of(a)
	u, err := qs.usageOf(ctx, a, q, now)
	if err != nil {
		return "", err
	}
	qs.mu.Lock()
	defer qs.mu.Unlock()
	b, perMinute, burst, what := &u.results, q.ResultsPerMinute, q.BurstResults, "results"
	if event {
		b, perMinute, burst, what = &u.events, q.EventsPerMinute, q.BurstEvents, "events"
	}
	if limited(perMinute) && !b.refill(now, perMinute, burst) {
		return fmt.Sprintf("quota: over this device's %d %s a minute (bursts of %d)", perMinute, what, burst), nil
	}
	if h := now.Unix() / 3600; h > u.hour { // the slots of the hours gone by start again
		if h-u.hour >= 24 {
			u.hours = [24]int64{}
		} else {
			for x := u.hour + 1; x <= h; x++ {
				u.hours[x%24] = 0
			}
		}
		u.hour = h
	}
	var day int64
	for _, b := range u.hours {
		day += b
	}
	if limited(q.BytesPerDay) && day+n > q.BytesPerDay {
		return fmt.Sprintf("quota: %d bytes in 24 hours with this one, over this device's %d", day+n, q.BytesPerDay), nil
	}
	if limited(perMinute) {
		b.tokens--
	}
	u.hours[u.hour%24] += n
	return "", nil
}

// usageOf is device a's usage, made when the collector first hears of
// it. When a's quota limits its bytes a day, the bytes its results stored
// in the 24 hours before now are read then (a restart does not give a
// device a new day): once, however many of its messages arrive
// meanwhile (as many as the ingest's workers), which wait for it. An
// error is the store's: the messages waiting get it too, and the next
// one reads again.
func (qs *Quotas) usageOf(ctx context.Context, a wire.Addr, q Quota, now time.Time) (*usage, error) {
	qs.mu.Lock()
	u := qs.use[a]
	if u != nil {
		qs.mu.Unlock()
		select {
		case <-u.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return u, u.err
	}
	u = &usage{ready: make(chan struct{}), results: bucket{float64(q.BurstResults), now}, events: bucket{float64(q.BurstEvents), now},
		hour: now.Unix() / 3600}
	qs.use[a] = u
	qs.mu.Unlock()
	var day int64
	var err error
	if limited(q.BytesPerDay) {
		day, err = qs.since(ctx, a, now.Add(-24*time.Hour))
	}
	qs.mu.Lock()
	u.hours[u.hour%24], u.err = day, err
	if err != nil {
		delete(qs.use, a)
	}
	qs.mu.Unlock()
	close(u.ready)
	return u, err
}

// CutReason returns an event's reason cut to q's MaxReasonBytes (at a
// character's start, with how much was cut said at its end), and whether
// it was cut.
func (q Quota) CutReason(reason string) (string, bool) {
	if !limited(q.MaxReasonBytes) || len(reason) <= q.MaxReasonBytes {
		return reason, false
	}
	cut := q.MaxReasonBytes
	for cut > 0 && !utf8.RuneStart(reason[cut]) {
		cut--
	}
	return reason[:cut] + fmt.Sprintf(" ... (%d bytes cut)", len(reason)-cut), true
}
