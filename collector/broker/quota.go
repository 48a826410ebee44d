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
	// BytesPerDay bounds the payload bytes taken in the last 24 hours.
	BytesPerDay int64 `yaml:"bytes_per_day"`
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
	return q
}

func (q Quota) check() error {
	for _, f := range []struct {
		name string
		v    int64
	}{{"max_result_bytes", q.MaxResultBytes}, {"max_labels", int64(q.MaxLabels)}, {"max_label_bytes", int64(q.MaxLabelBytes)},
		{"results_per_minute", int64(q.ResultsPerMinute)}, {"burst_results", int64(q.BurstResults)}, {"bytes_per_day", q.BytesPerDay}} {
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
	tokens float64   // results it may send now (a bucket of BurstResults, ResultsPerMinute a minute)
	at     time.Time // of tokens
	hours  [24]int64 // payload bytes taken in each of the last 24 hours, by hour % 24
	hour   int64     // the hour (Unix hours) of hours' newest slot
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
	q := qs.of(a)
	qs.mu.Lock()
	u := qs.use[a]
	qs.mu.Unlock()
	if u == nil {
		day, err := qs.since(ctx, a, now.Add(-24*time.Hour))
		if err != nil {
			return "", err
		}
		u = &usage{tokens: float64(q.BurstResults), at: now, hour: now.Unix() / 3600}
		u.hours[u.hour%24] = day
		qs.mu.Lock()
		if qs.use[a] == nil {
			qs.use[a] = u
		}
		u = qs.use[a]
		qs.mu.Unlock()
	}
	qs.mu.Lock()
	defer qs.mu.Unlock()
	if limited(q.ResultsPerMinute) {
		burst := float64(max(q.BurstResults, 1))
		u.tokens = min(burst, u.tokens+now.Sub(u.at).Minutes()*float64(q.ResultsPerMinute))
		u.at = now
		if u.tokens < 1 {
			return fmt.Sprintf("quota: over this device's %d results a minute (bursts of %d)", q.ResultsPerMinute, q.BurstResults), nil
		}
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
	if limited(q.ResultsPerMinute) {
		u.tokens--
	}
	u.hours[u.hour%24] += n
	return "", nil
}
