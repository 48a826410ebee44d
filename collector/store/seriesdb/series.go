package seriesdb

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/edgebench/edgebench/collector/group"
	"github.com/edgebench/edgebench/collector/stats"
)

// The series and their changes, kept as results arrive.
//
// A series is the succeeded results of one device running one Spec with
// the same labels, in the order they ran (their start time on the
// device, then their id); the schedule's label does not split it (a
// scheduled run and a manual one of the same work are one experiment).
// Each has a row in the series table with its latest figures, its counts,
// and the change detector's state: stats.Detector for each of
// SeriesMetrics, fed one result at a time in the ingest's transaction, so
// a new result costs one series' update whatever the history stored. A
// change the detector makes final is stored once, in changes (kind
// 'change'), when it is found; the detector's provisional claims (windows
// not full yet) are kept on the series' row and listed apart.
//
// What a result gives the detector: the mean of each figure over its
// runs whose verdict does not say NOT VALID (a run without a verdict
// counts); a result whose every run is not valid is left out, and a
// change says how many were left out among the results it compares, and
// why (Change.LeftOut). So a change always has valid runs on both sides.
//
// Results that arrive late (started before the series' latest): the
// state keeps a checkpoint, the detector as it was lateWindow valid
// results before the end, and those results. A result that starts after
// the checkpoint is put in its place and the detector replayed from the
// checkpoint: the state is then what a rebuild over the results in order
// gives, unless the replay would move or withdraw a change already
// stored, in which case the result is left out. A result that starts
// before the checkpoint is left out too. Both are counted as late on the
// series (SeriesInfo.Late); the next rebuild (RebuildSeries), which
// takes every result in order, counts them in. Prometheus refuses
// samples older than its out-of-order window in the same way.

// SeriesMetrics are the figures the change detector watches, in order:
//
//	rps          requests per second (higher is better)
//	p99_us       the 99th percentile of latency, µs (lower is better)
//	cpu_per_kreq the device's CPU % per 1000 req/s (lower is better): what
//	             one request costs the machine serving it
func SeriesMetrics() []string { return slices.Clone(seriesMetrics[:]) }

var seriesMetrics = [nMetrics]string{"rps", "p99_us", "cpu_per_kreq"}

const nMetrics = 3

// MetricValue is the figure m (one of SeriesMetrics) of a result whose
// runs average rps requests/s, p99us and a CPU of cpuPct %; NaN when it
// has none.
func MetricValue(m string, rps, p99us, cpuPct float64) float64 {
	switch m {
	case "rps":
		return rps
	case "p99_us":
		return p99us
	case "cpu_per_kreq":
		if rps <= 0 || math.IsNaN(cpuPct) {
			return math.NaN()
		}
		return 1000 * cpuPct / rps
	}
	return math.NaN()
}

// SeriesKey is the series of a result of device fleet/device that ran
// spec with labels: "fleet/device · spec · labels" (no labels part
// without labels), and the labels that split it (all but the
// schedule's).
func SeriesKey(fleet, device string, spec group.Spec, labels map[string]string) (string, map[string]string) {
	split := make(map[string]string, len(labels))
	for k, v := range labels {
		if k != group.ScheduleLabel {
			split[k] = v
		}
	}
	key := fleet + "/" + device + " · " + spec.String()
	if l := group.LabelString(split); l != "" {
		key += " · " + l
	}
	return key, split
}

// runFigure is what the detector reads of one run: its figures and
// whether its verdict says it is not valid (and what limited it).
type runFigure struct {
	rps, p99us, cpuPct float64
	invalid            bool
	limitedBy          string
}

// resultValues are the values a result gives the detector, one per
// SeriesMetrics, from its runs: each figure's mean over the runs that are
// not invalid (NaN figures left out, as SQL's avg leaves out NULL; req/s
// 0 without runs). out is what limited its runs when every one is not
// valid: then the result is left out, and its values are NaN.
func resultValues(runs []runFigure) (v [nMetrics]float64, out string) {
	var rps, p99, cpu float64
	var n, np99, ncpu int
	for _, r := range runs {
		if r.invalid {
			if out == "" {
				out = r.limitedBy
			}
			continue
		}
		n++
		rps += r.rps
		if !math.IsNaN(r.p99us) {
			p99, np99 = p99+r.p99us, np99+1
		}
		if !math.IsNaN(r.cpuPct) {
			cpu, ncpu = cpu+r.cpuPct, ncpu+1
		}
	}
	if len(runs) > 0 && n == 0 {
		if out == "" {
			out = "not valid"
		}
		return [nMetrics]float64{math.NaN(), math.NaN(), math.NaN()}, out
	}
	mean := func(sum float64, n int) float64 {
		if n == 0 {
			return math.NaN()
		}
		return sum / float64(n)
	}
	r, p, c := 0.0, mean(p99, np99), mean(cpu, ncpu)
	if n > 0 {
		r = rps / float64(n)
	}
	for i, m := range seriesMetrics {
		v[i] = MetricValue(m, r, p, c)
	}
	return v, ""
}

// Change is a lasting change found in a series.
type Change struct {
	Series   string            `json:"series"` // fleet/device · spec · labels
	Fleet    string            `json:"fleet"`
	Device   string            `json:"device"`
	Spec     string            `json:"spec"`
	Labels   map[string]string `json:"labels,omitempty"` // those that split the series
	Metric   string            `json:"metric"`
	At       time.Time         `json:"at"`        // when the first result after it ran
	ResultID string            `json:"result_id"` // the first result after it
	Before   float64           `json:"before"`    // medians
	After    float64           `json:"after"`
	Pct      float64           `json:"pct"` // the shift, % of Before, with its 95 % interval
	LowPct   float64           `json:"low_pct"`
	HighPct  float64           `json:"high_pct"`
	P        float64           `json:"p"`
	// The results compared on each side, oldest first, and their values.
	BeforeIDs    []string  `json:"before_ids"`
	AfterIDs     []string  `json:"after_ids"`
	BeforeValues []float64 `json:"before_values,omitempty"`
	AfterValues  []float64 `json:"after_values,omitempty"`
	// LeftOut counts the results between the first compared and the last
	// that were left out because no run of theirs was valid, by what
	// limited them ("generator": 3).
	LeftOut map[string]int `json:"left_out,omitempty"`
	// Also is what else changed there: the fingerprint of the last result
	// before against the first after (kernel, firmware, edgebench's
	// version, the server's, the CPU governor), and throttling on each
	// side.
	Also []string `json:"also,omitempty"`
	// Provisional: a claim on a window not full yet (stats.Detector), which
	// the next results may confirm, move or withdraw; never alerted. A
	// final change is stored once and never changes.
	Provisional bool `json:"provisional,omitempty"`
	// Seq is its number in the store (final changes), DetectedAt when the
	// collector found it.
	Seq        int64     `json:"seq,omitempty"`
	DetectedAt time.Time `json:"detected_at,omitzero"`
}

// Worse reports whether the change is for the worse.
func (c *Change) Worse() bool {
	if c.Metric == "rps" {
		return c.Pct < 0
	}
	return c.Pct > 0
}

// LeftOutText says what the change left out among the results it
// compared: "2 results not valid (generator 2)", "" for none.
func (c *Change) LeftOutText() string {
	if len(c.LeftOut) == 0 {
		return ""
	}
	n := 0
	keys := make([]string, 0, len(c.LeftOut))
	for k, v := range c.LeftOut {
		n += v
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + " " + strconv.Itoa(c.LeftOut[k])
	}
	s := "results"
	if n == 1 {
		s = "result"
	}
	return fmt.Sprintf("%d %s not valid (%s)", n, s, strings.Join(parts, ", "))
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

// lateWindow is how many valid results a series keeps after its
// checkpoint, within which a late result is put in its place: the
// detector's Window.
func lateWindow(o stats.DetectOptions) int { return o.Filled().Window }

// maxPoints bounds the points a series' state keeps: what the
// detectors' values refer to, which a figure that is mostly NaN may
// spread over many results. Past it the oldest are dropped: a change
// then lacks the ids of the results it compared that far back (its
// figures do not change: the detectors keep their values).
func maxPoints(o stats.DetectOptions) int {
	f := o.Filled()
	return 4 * (max(f.MinBefore, f.MaxBefore) + 2*f.Window + lateWindow(o))
}

// point is one result of a series, or a run of results left out as not
// valid (Out: how many, by what limited them).
type point struct {
	Seq     int64             // its number in the series, the detectors' reference
	ID      string            // the result's id (the first of a run left out)
	Started int64             // ns
	V       [nMetrics]float64 // the values; kept after the checkpoint only
	Thr     bool              // throttled
	Out     map[string]int    // a run of results left out
}

// emitted is a final change a series' current detector found that its
// checkpoint's has not: a late result may not change it. It is told by
// the results it compared: the first, the first after the change, the
// last, and how many.
type emitted struct {
	Lo, At, Last int64
	N            int
}

func emittedOf(f stats.Found) emitted {
	return emitted{f.Refs[0], f.Refs[f.Index-f.Lo], f.Refs[len(f.Refs)-1], len(f.Refs)}
}

// seriesState is the detector's state of one series (the series table's
// state column, encoded by encodeState).
type seriesState struct {
	Seq    int64   // the last point's number
	Points []point // in the series' order
	// Check is the number of Points at or before the checkpoint; the
	// points after it are the ones a late result is replayed with.
	Check int
	C, S  [nMetrics]stats.Detector // at the checkpoint, and after every point
	// Emitted are the final changes S found that C has not yet, per
	// metric, oldest first.
	Emitted [nMetrics][]emitted
}

// result is a result as the series take it.
type seriesResult struct {
	id       string
	started  int64
	received int64
	v        [nMetrics]float64
	out      string // what limited its runs, when none was valid: left out
	thr      bool
}

// found is a final change the state found, with the points it compared.
type found struct {
	metric int
	stats.Found
}

// add puts r in the series and returns the final changes it makes; late
// reports that it was left out, too late to be put in its place.
func (st *seriesState) add(r seriesResult, o stats.DetectOptions) (fs []found, late bool) {
	pos, _ := slices.BinarySearchFunc(st.Points, r, func(p point, r seriesResult) int {
		return cmp.Or(cmp.Compare(p.Started, r.started), cmp.Compare(p.ID, r.id))
	})
	if r.out != "" { // left out: counted where it ran, whenever it comes
		st.insertOut(pos, r)
		return nil, false
	}
	if pos < st.Check {
		return nil, true
	}
	p := point{Seq: st.Seq + 1, ID: r.id, Started: r.started, V: r.v, Thr: r.thr}
	if pos == len(st.Points) { // in order: one step of each detector
		st.Points = append(st.Points, p)
		for m := range nMetrics {
			for _, f := range st.S[m].Push(p.V[m], p.Seq, o) {
				fs = append(fs, found{m, f})
				st.Emitted[m] = append(st.Emitted[m], emittedOf(f))
			}
		}
	} else { // late: the detectors replayed from the checkpoint
		pts := slices.Insert(slices.Clone(st.Points), pos, p)
		var s [nMetrics]stats.Detector
		var got [nMetrics][]emitted
		for m := range nMetrics {
			s[m] = st.C[m].Clone()
			var mine []found
			for _, q := range pts[st.Check:] {
				if q.Out != nil {
					continue
				}
				for _, f := range s[m].Push(q.V[m], q.Seq, o) {
					mine = append(mine, found{m, f})
					got[m] = append(got[m], emittedOf(f))
				}
			}
			had := st.Emitted[m]
			if len(got[m]) < len(had) || !slices.Equal(got[m][:len(had)], had) {
				return nil, true // it would move or withdraw a change stored
			}
			fs = append(fs, mine[len(had):]...)
		}
		st.Points, st.S, st.Emitted = pts, s, got
	}
	st.Seq = p.Seq
	st.fold(o)
	return fs, false
}

// insertOut counts a result left out at pos of the points: in the run of
// results left out there, or as a new one.
func (st *seriesState) insertOut(pos int, r seriesResult) {
	for _, i := range []int{pos - 1, pos} {
		if i >= 0 && i < len(st.Points) && st.Points[i].Out != nil {
			st.Points[i].Out[r.out]++
			return
		}
	}
	if pos == 0 && st.Check > 0 {
		return // before every point kept: only the series' count has it
	}
	st.Seq++
	st.Points = slices.Insert(st.Points, pos, point{Seq: st.Seq, ID: r.id, Started: r.started, Out: map[string]int{r.out: 1}})
	if pos < st.Check {
		st.Check++
	}
}

// fold moves the checkpoint on while more than lateWindow valid points
// follow it, and drops the points no detector refers to.
func (st *seriesState) fold(o stats.DetectOptions) {
	valid := 0
	for _, p := range st.Points[st.Check:] {
		if p.Out == nil {
			valid++
		}
	}
	for ; valid > lateWindow(o); st.Check++ {
		p := st.Points[st.Check]
		if p.Out != nil {
			continue
		}
		valid--
		for m := range nMetrics {
			for range st.C[m].Push(p.V[m], p.Seq, o) { // found again: S found it before
				st.Emitted[m] = st.Emitted[m][1:]
			}
		}
	}
	for i := range st.Points[:st.Check] {
		st.Points[i].V = [nMetrics]float64{}
	}
	// The first point any checkpoint detector still refers to.
	first := st.Check
	for m := range nMetrics {
		if len(st.C[m].Refs) > 0 {
			if i := st.find(st.C[m].Refs[0]); i >= 0 && i < first {
				first = i
			}
		}
	}
	first = min(max(first, len(st.Points)-maxPoints(o)), st.Check)
	if first > 0 {
		st.Points = slices.Delete(st.Points, 0, first)
		st.Check -= first
	}
}

// find is the index of the point numbered seq, -1 when it is not kept.
func (st *seriesState) find(seq int64) int {
	for i := range st.Points {
		if st.Points[i].Seq == seq {
			return i
		}
	}
	return -1
}

// provisional are the current detectors' provisional claims, per metric.
func (st *seriesState) provisional(o stats.DetectOptions) []found {
	var out []found
	for m := range nMetrics {
		for _, f := range st.S[m].Provisional(o) {
			out = append(out, found{m, f})
		}
	}
	return out
}
