package series

import (
	"context"
	"math"
	"slices"
	"sort"

	"github.com/edgebench/edgebench/collector/group"
	"github.com/edgebench/edgebench/collector/stats"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/seriesdb"
	"github.com/edgebench/edgebench/wire"
)

// A series is the succeeded results of one device running one Spec with
// the same labels, in the order they ran; the labels a series ignores
// (the schedule's) do not split it: a scheduled run and a manual one of
// the same work are one experiment. The store keeps each series' state
// and its changes as results arrive (store/seriesdb); this package
// holds what the series are over the stored results as a whole: the
// detection over every series from its first result (Changes), the
// reference the stored changes are held to, and the grouping of listed
// runs into series (Of).

// Change is a lasting change found in a series.
type Change = seriesdb.Change

// Metrics are the figures the change detector watches, in order
// (seriesdb.SeriesMetrics).
func Metrics() []string { return seriesdb.SeriesMetrics() }

// Value is the figure m (one of Metrics) of r, NaN when r has none.
func Value(r *store.RunRow, m string) float64 {
	return seriesdb.MetricValue(m, r.RPS, r.P99US, r.CPUPct)
}

// Options select the changes Changes finds.
type Options struct {
	Fleet  string
	Device string
	Detect stats.DetectOptions
}

// Store is what Changes reads of the store (a *store.Store).
type Store interface {
	// Devices lists the devices the store knows.
	Devices(ctx context.Context) ([]store.Device, error)
	// SeriesHistories reads the series of a device from its stored results.
	SeriesHistories(ctx context.Context, a wire.Addr) ([]seriesdb.SeriesHistory, error)
}

// Of groups runs (newest first, as Runs returns them) into series, each
// oldest first, keyed by fleet/device · spec · labels but those of
// ignore (nil: the schedule's label).
func Of(runs []store.RunRow, ignore []string) (keys []string, by map[string][]store.RunRow) {
	if ignore == nil {
		ignore = []string{group.ScheduleLabel}
	}
	by = map[string][]store.RunRow{}
	for i := len(runs) - 1; i >= 0; i-- {
		r := runs[i]
		if r.Outcome != string(wire.StateSucceeded) {
			continue
		}
		labels := map[string]string{}
		for k, v := range r.Labels {
			if !slices.Contains(ignore, k) {
				labels[k] = v
			}
		}
		key := r.Fleet + "/" + r.Device + " · " + r.Spec.String()
		if l := group.LabelString(labels); l != "" {
			key += " · " + l
		}
		if _, ok := by[key]; !ok {
			keys = append(keys, key)
		}
		by[key] = append(by[key], r)
	}
	sort.Strings(keys)
	return keys, by
}

// Changes runs stats.DetectChanges over every series of the store's
// devices (o's fleet and device), each read whole from its stored
// results in order, and returns every change it claims, oldest first:
// the whole-series detection. The store's changes, found as the results
// arrived, are held to it: its claims are the final changes stored
// followed by each series' provisional ones (a test compares them). Its
// cost is the history's: it is for tests and checks, never for a page.
func Changes(ctx context.Context, s Store, o Options) ([]Change, error) {
	devs, err := s.Devices(ctx)
	if err != nil {
		return nil, err
	}
	opt := o.Detect.Filled()
	var out []Change
	for _, d := range devs {
		if o.Fleet != "" && d.Fleet != o.Fleet || o.Device != "" && d.ID != o.Device {
			continue
		}
		hs, err := s.SeriesHistories(ctx, wire.Addr{Fleet: d.Fleet, Device: d.ID})
		if err != nil {
			return nil, err
		}
		for _, h := range hs {
			for m, metric := range Metrics() {
				xs := make([]float64, len(h.Results))
				for i, r := range h.Results {
					xs[i] = r.Values[m]
				}
				start := 0 // the segment's first result
				for _, cp := range stats.DetectChanges(xs, opt) {
					out = append(out, change(d, h, metric, xs, start, cp, opt))
					start = cp.Index
				}
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out, nil
}

// change is the Change of a change point cp of series h's metric, whose
// segment started at the result start: the finite values compared on each
// side (at most MaxBefore since start before, Window from cp on), and the
// results left out between the first and the last of them.
func change(d store.Device, h seriesdb.SeriesHistory, metric string, xs []float64, start int, cp stats.ChangePoint, o stats.DetectOptions) Change {
	rs := h.Results
	r := rs[cp.Index]
	c := Change{Series: h.Key, Fleet: d.Fleet, Device: d.ID, Spec: h.Spec, Labels: h.Labels, Metric: metric, At: r.Started, ResultID: r.ID,
		Before: cp.Delta.Base, After: cp.Delta.Other, Pct: cp.Delta.Pct, LowPct: cp.Delta.LowPct, HighPct: cp.Delta.HighPct, P: cp.Delta.P,
		BeforeIDs: []string{}, AfterIDs: []string{}}
	first, last := cp.Index, cp.Index
	for i := cp.Index - 1; i >= start && len(c.BeforeIDs) < o.MaxBefore; i-- {
		if !math.IsNaN(xs[i]) && !math.IsInf(xs[i], 0) {
			c.BeforeIDs = append(c.BeforeIDs, rs[i].ID)
			c.BeforeValues = append(c.BeforeValues, xs[i])
			first = i
		}
	}
	slices.Reverse(c.BeforeIDs)
	slices.Reverse(c.BeforeValues)
	for i := cp.Index; i < len(rs) && len(c.AfterIDs) < o.Window; i++ {
		if !math.IsNaN(xs[i]) && !math.IsInf(xs[i], 0) {
			c.AfterIDs = append(c.AfterIDs, rs[i].ID)
			c.AfterValues = append(c.AfterValues, xs[i])
			last = i
		}
	}
	for i := first; i <= last; i++ {
		if why := rs[i].LeftOut; why != "" {
			if c.LeftOut == nil {
				c.LeftOut = map[string]int{}
			}
			c.LeftOut[why]++
		}
	}
	return c
}
