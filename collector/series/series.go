package series

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/edgebench/edgebench/collector/escape"
	"github.com/edgebench/edgebench/collector/group"
	"github.com/edgebench/edgebench/collector/stats"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/wire"
)

// A series is the succeeded results of one device running one Spec with
// the same labels, in the order they ran; the labels a series ignores
// (the schedule's, unless told otherwise) do not split it: a scheduled
// run and a manual one of the same work are one experiment. The detector
// watches three figures of each series:
//
//	rps          requests per second (higher is better)
//	p99_us       the 99th percentile of latency, µs (lower is better)
//	cpu_per_kreq the device's CPU % per 1000 req/s (lower is better): what
//	             one request costs the machine serving it

// Metrics are the figures the change detector watches, in order.
func Metrics() []string { return []string{"rps", "p99_us", "cpu_per_kreq"} }

// Value is the figure m (one of Metrics) of r, NaN when r has none.
func Value(r *store.RunRow, m string) float64 {
	switch m {
	case "rps":
		return r.RPS
	case "p99_us":
		return r.P99US
	case "cpu_per_kreq":
		if r.RPS <= 0 || math.IsNaN(r.CPUPct) {
			return math.NaN()
		}
		return 1000 * r.CPUPct / r.RPS
	}
	return math.NaN()
}

// Change is a lasting change found in a series.
type Change struct {
	Series   string            `json:"series"` // fleet/device · spec · labels
	Fleet    string            `json:"fleet"`
	Device   string            `json:"device"`
	Spec     string            `json:"spec"`
	Labels   map[string]string `json:"labels,omitempty"`
	Metric   string            `json:"metric"`
	At       time.Time         `json:"at"`        // when the first result after it ran
	ResultID string            `json:"result_id"` // the first result after it
	Before   float64           `json:"before"`    // medians
	After    float64           `json:"after"`
	Pct      float64           `json:"pct"` // the shift, % of Before, with its 95 % interval
	LowPct   float64           `json:"low_pct"`
	HighPct  float64           `json:"high_pct"`
	P        float64           `json:"p"`
	// The results compared on each side, oldest first.
	BeforeIDs []string `json:"before_ids"`
	AfterIDs  []string `json:"after_ids"`
	// Also is what else changed there: the fingerprint of the last result
	// before against the first after (kernel, firmware, edgebench's
	// version, the server's, the CPU governor), and throttling on each
	// side.
	Also []string `json:"also,omitempty"`
}

// Worse reports whether the change is for the worse.
func (c *Change) Worse() bool {
	if c.Metric == "rps" {
		return c.Pct < 0
	}
	return c.Pct > 0
}

// Options select the changes Changes finds.
type Options struct {
	Since time.Time // changes at or after this; the results before it still count as history
	// History, when set, bounds the results read before Since (all of
	// them otherwise).
	History time.Duration
	Fleet   string
	Device  string
	Detect  stats.DetectOptions
	// Ignore are the labels that do not split a series; nil: the
	// schedule's label (store.ScheduleLabel).
	Ignore []string
}

// Store is what the series read of the store (a *store.Store).
type Store interface {
	// Runs lists the results f selects, the last received first.
	Runs(ctx context.Context, f store.Filter) ([]store.RunRow, error)
	// Result returns a stored result, decoded from its payload.
	Result(ctx context.Context, id string) (*wire.Result, error)
}

// Of groups runs (newest first, as Runs returns them) into series, each
// oldest first, keyed by fleet/device · spec · labels but those of
// ignore (nil: the schedule's label).
func Of(runs []store.RunRow, ignore []string) (keys []string, by map[string][]store.RunRow) {
	if ignore == nil {
		ignore = []string{store.ScheduleLabel}
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

// Changes runs the detector over every series of the store and returns
// the changes found at or after o.Since, oldest first.
func Changes(ctx context.Context, s Store, o Options) ([]Change, error) {
	f := store.Filter{Fleet: o.Fleet, Device: o.Device}
	var from time.Time
	if o.History > 0 && !o.Since.IsZero() {
		// The history is by the results' own times, as the series are;
		// the store selects by receive time, which is at most a day
		// before a result's time (a later stamp is refused at ingest).
		from = o.Since.Add(-o.History)
		f.Since = from.Add(-24 * time.Hour)
	}
	runs, err := s.Runs(ctx, f)
	if err != nil {
		return nil, err
	}
	if !from.IsZero() {
		runs = slices.DeleteFunc(runs, func(r store.RunRow) bool { return r.Started.Before(from) })
	}
	keys, by := Of(runs, o.Ignore)
	var out []Change
	opt := o.Detect.Filled()
	for _, key := range keys {
		rs := by[key]
		for _, m := range Metrics() {
			xs := make([]float64, len(rs))
			for i := range rs {
				xs[i] = Value(&rs[i], m)
			}
			for _, cp := range stats.DetectChanges(xs, opt) {
				r := rs[cp.Index]
				if r.Started.Before(o.Since) {
					continue
				}
				c := Change{Series: key, Fleet: r.Fleet, Device: r.Device, Spec: r.Spec.String(), Labels: r.Labels, Metric: m,
					At: r.Started, ResultID: r.ID, Before: cp.Delta.Base, After: cp.Delta.Other,
					Pct: cp.Delta.Pct, LowPct: cp.Delta.LowPct, HighPct: cp.Delta.HighPct, P: cp.Delta.P}
				before, after := sideIDs(rs, xs, cp.Index, opt)
				for _, i := range before {
					c.BeforeIDs = append(c.BeforeIDs, rs[i].ID)
				}
				for _, i := range after {
					c.AfterIDs = append(c.AfterIDs, rs[i].ID)
				}
				c.Also, err = alsoChanged(ctx, s, rs, before, after)
				if err != nil {
					return nil, err
				}
				out = append(out, c)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out, nil
}

// sideIDs are the indexes of the finite values the detector compared on
// each side of a change at k: at most MaxBefore before, Window from k on.
func sideIDs(rs []store.RunRow, xs []float64, k int, o stats.DetectOptions) (before, after []int) {
	for i := k - 1; i >= 0 && len(before) < o.MaxBefore; i-- {
		if !math.IsNaN(xs[i]) {
			before = append(before, i)
		}
	}
	slices.Reverse(before)
	for i := k; i < len(rs) && len(after) < o.Window; i++ {
		if !math.IsNaN(xs[i]) {
			after = append(after, i)
		}
	}
	return before, after
}

// alsoChanged compares the fingerprints on both sides of a change.
func alsoChanged(ctx context.Context, s Store, rs []store.RunRow, before, after []int) ([]string, error) {
	if len(before) == 0 || len(after) == 0 {
		return nil, nil
	}
	a, err := s.Result(ctx, rs[before[len(before)-1]].ID)
	if err != nil {
		return nil, err
	}
	b, err := s.Result(ctx, rs[after[0]].ID)
	if err != nil {
		return nil, err
	}
	var out []string
	diff := func(what, x, y string) {
		if x != y {
			out = append(out, fmt.Sprintf("%s %s -> %s", what, escape.Printable(orNone(x)), escape.Printable(orNone(y))))
		}
	}
	fa, fb := a.Fingerprint, b.Fingerprint
	diff("kernel", fa.Kernel, fb.Kernel)
	diff("firmware", extra(fa.Extra, "firmware"), extra(fb.Extra, "firmware"))
	diff("edgebench", fa.AgentVersion, fb.AgentVersion)
	diff("server", fa.Server, fb.Server)
	diff("server binary", short(fa.ServerSHA256), short(fb.ServerSHA256))
	diff("os", fa.OS, fb.OS)
	diff("governor", fa.Governor, fb.Governor)
	diff("max MHz", strconv.Itoa(fa.MaxFreqMHz), strconv.Itoa(fb.MaxFreqMHz))
	thr := func(idx []int) int {
		n := 0
		for _, i := range idx {
			if rs[i].Throttled {
				n++
			}
		}
		return n
	}
	if tb, ta := thr(before), thr(after); tb > 0 || ta > 0 {
		out = append(out, fmt.Sprintf("throttled in %d of %d results before, %d of %d after", tb, len(before), ta, len(after)))
	}
	return out, nil
}

func extra(ls []wire.Label, k string) string {
	for _, l := range ls {
		if l.K == k {
			return l.V
		}
	}
	return ""
}

func orNone(s string) string {
	if s == "" || s == "0" {
		return "(none)"
	}
	return s
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// MarshalJSON writes the interval's bounds as null when there is none
// (JSON has no NaN).
func (c Change) MarshalJSON() ([]byte, error) {
	type plain Change
	out := struct {
		plain
		LowPct  *float64 `json:"low_pct"`
		HighPct *float64 `json:"high_pct"`
	}{plain: plain(c)}
	if !math.IsNaN(c.LowPct) && !math.IsNaN(c.HighPct) {
		out.LowPct, out.HighPct = &c.LowPct, &c.HighPct
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads what MarshalJSON wrote, null bounds as NaN.
func (c *Change) UnmarshalJSON(b []byte) error {
	type plain Change
	in := struct {
		*plain
		LowPct  *float64 `json:"low_pct"`
		HighPct *float64 `json:"high_pct"`
	}{plain: (*plain)(c)}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	c.LowPct, c.HighPct = math.NaN(), math.NaN()
	if in.LowPct != nil && in.HighPct != nil {
		c.LowPct, c.HighPct = *in.LowPct, *in.HighPct
	}
	return nil
}
