package collector

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/edgebench/edgebench/wire"
)

// Metric is one figure a comparison reports.
type Metric struct {
	Name   string // as in --metric
	Title  string // column header
	Unit   string
	Higher bool // higher is better
	Count  bool // a count of events: a group shows its total, not its median
	// Sparse: only some results have it (capacity): a table shows it
	// only when one of its groups has it.
	Sparse bool
	get    func(*RunFigures) float64
}

// Metrics are the figures of a comparison, in the order of the seeds'
// tables.
var Metrics = []Metric{
	{Name: "rps", Title: "req/s", Unit: "req/s", Higher: true, get: func(f *RunFigures) float64 { return f.RPS }},
	{Name: "mean", Title: "mean", Unit: "µs", get: func(f *RunFigures) float64 { return f.MeanUS }},
	{Name: "p50", Title: "p50", Unit: "µs", get: func(f *RunFigures) float64 { return f.P50US }},
	{Name: "p99", Title: "p99", Unit: "µs", get: func(f *RunFigures) float64 { return f.P99US }},
	{Name: "max", Title: "max", Unit: "µs", get: func(f *RunFigures) float64 { return f.MaxUS }},
	{Name: "timeouts", Title: "timeouts", Count: true, get: func(f *RunFigures) float64 { return float64(f.Timeouts) }},
	{Name: "errors", Title: "errors", Count: true, get: func(f *RunFigures) float64 { return float64(f.Errors) }},
	{Name: "cpu", Title: "CPU %", Unit: "%", get: func(f *RunFigures) float64 { return f.CPUPct }},
	{Name: "io", Title: "IO KB/s", Unit: "KB/s", get: func(f *RunFigures) float64 { return f.IOKBs }},
	{Name: "mem", Title: "mem MB", Unit: "MB", get: func(f *RunFigures) float64 { return f.MemKB / 1024 }},
	{Name: "capacity", Title: "capacity", Unit: "req/s", Higher: true, Sparse: true, get: func(f *RunFigures) float64 { return f.CapacityRPS }},
}

// MetricByName finds a metric by its --metric name.
func MetricByName(name string) (Metric, bool) {
	for _, m := range Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// MetricNames lists the --metric names.
func MetricNames() []string {
	var out []string
	for _, m := range Metrics {
		out = append(out, m.Name)
	}
	return out
}

// Shown is the figure a group's table cell and chart bar show for m, with
// its 95 % interval: the median and the interval of the median, or for a
// count the total of the runs (no interval: NaN).
func (m Metric) Shown(s GroupStats) (v, lo, hi float64) {
	if m.Count {
		if s.N == 0 {
			return math.NaN(), math.NaN(), math.NaN()
		}
		return s.Sum, math.NaN(), math.NaN()
	}
	return s.Median, s.MedianLow, s.MedianHigh
}

// QueryError is a comparison asked of something the runs do not have (a
// key, a group) or a malformed one: the asker's mistake, which the
// command line reports with exit status 2 and the API with 400.
type QueryError struct{ Msg string }

func (e *QueryError) Error() string { return e.Msg }

func queryErrorf(format string, a ...any) error { return &QueryError{fmt.Sprintf(format, a...)} }

// CompareOptions says what to compare.
type CompareOptions struct {
	By      string   // device, a label key, a system-info field or a part of the spec
	Metrics []string // figures to test for differences; default rps, p50, p99
	Base    string   // the group others are compared to; default the first seen
	Filter  Filter   // which runs; Filter.ExcludeThrottled leaves throttled runs out
}

// Group is one group of a comparison table.
type Group struct {
	Key       string `json:"key"`
	N         int    `json:"n"`
	Throttled int    `json:"throttled"` // runs flagged as throttled (0 when they were excluded)
	// Invalid counts the runs whose verdict says their figure does not
	// stand, GeneratorBound those the load generator limited.
	Invalid        int                   `json:"invalid"`
	GeneratorBound int                   `json:"generator_bound"`
	Stats          map[string]GroupStats `json:"stats"`
	Deltas         map[string]Delta      `json:"deltas,omitempty"` // against the base group, for the tested metrics
	values         map[string][]float64
}

// Table compares the groups of the runs of one spec (less the part the
// comparison is by, when it is one): runs of different work are never in
// one table.
type Table struct {
	Spec   Spec    `json:"spec"`
	Base   string  `json:"base"` // "" when the base group asked for has no runs of this spec
	Groups []Group `json:"groups"`
}

// Comparison is one table per spec of groups and their differences.
type Comparison struct {
	By               string   `json:"by"`
	Tested           []string `json:"tested"`
	ExcludeThrottled bool     `json:"exclude_throttled"`
	ByNote           string   `json:"by_note,omitempty"` // which of a label and a field of one name the groups are by
	ExcludeInvalid   bool     `json:"exclude_invalid"`
	Tables           []Table  `json:"tables"`
	base             string   // the base group asked for, if any
}

// groupKind is where a comparison's groups come from.
type groupKind int

const (
	groupLabel         groupKind = iota // a run label
	groupSystem                         // a system-info field (or the device, the fleet)
	groupSpec                           // a part of the spec
	groupLabelOrSystem                  // the run label where a run has it, else the system-info field
)

// ResolveGroupKey reads a --by key: label.KEY is the run label KEY,
// sys.KEY the system-info field or part of the spec KEY, and a bare key
// a part of the spec, a system-info field (which a run label of its name
// overrides where a run has one) or else a run label.
func ResolveGroupKey(by string) (string, groupKind) {
	if k, ok := strings.CutPrefix(by, "label."); ok {
		return k, groupLabel
	}
	if k, ok := strings.CutPrefix(by, "sys."); ok {
		if isSpecField(k) {
			return k, groupSpec
		}
		if _, col := groupColumns[k]; col {
			return k, groupSystem
		}
	}
	if isSpecField(by) {
		return by, groupSpec
	}
	if _, col := groupColumns[by]; col {
		return by, groupLabelOrSystem
	}
	return by, groupLabel
}

// specPart is the part of the spec a comparison by by compares, "" when
// it is by something else.
func specPart(by string) string {
	if k, kind := ResolveGroupKey(by); kind == groupSpec {
		return k
	}
	return ""
}

// Compare groups the stored runs and compares them. A label key that no
// selected run has is a QueryError listing the keys there are. Where a
// run label and a system-info field or part of the spec share the key,
// the comparison's ByNote says which one it is by and how to ask for the
// other.
func (s *Store) Compare(ctx context.Context, o CompareOptions) (*Comparison, error) {
	if o.By == "" {
		o.By = "device"
	}
	if _, err := testedMetrics(o.Metrics); err != nil {
		return nil, err
	}
	if k, ok := strings.CutPrefix(o.By, "sys."); ok && !isSpecField(k) {
		if _, col := groupColumns[k]; !col {
			return nil, queryErrorf("no system field %q to group by: the system fields and parts of the spec are %s", Printable(k),
				strings.Join(groupKeys(nil), ", "))
		}
	}
	runs, err := s.GroupRuns(ctx, o.By, o.Filter)
	if err != nil {
		return nil, err
	}
	if runs, err = s.withVerdicts(ctx, runs, o.Filter.ExcludeInvalid); err != nil {
		return nil, err
	}
	note := ""
	if len(runs) > 0 {
		labels, err := s.labelKeys(ctx, o.Filter)
		if err != nil {
			return nil, err
		}
		key, kind := ResolveGroupKey(o.By)
		switch {
		case kind == groupLabel && !slices.Contains(labels, key):
			return nil, queryErrorf("no run has %q to group by: the keys are %s", Printable(o.By), strings.Join(groupKeys(labels), ", "))
		case kind == groupLabelOrSystem && slices.Contains(labels, key):
			note = fmt.Sprintf("%s: the run label %s where a run has one, else the system field; --by sys.%s or label.%s for one of them",
				Printable(key), Printable(key), Printable(key), Printable(key))
		case kind == groupSpec && o.By == key && slices.Contains(labels, key):
			note = fmt.Sprintf("%s: the part of the spec, not the run label %s; --by label.%s for the label",
				Printable(key), Printable(key), Printable(key))
		}
	}
	c, err := BuildComparison(runs, o)
	if c != nil {
		c.ByNote = note
	}
	return c, err
}

// labelKeys lists the label keys of the succeeded results f selects.
func (s *Store) labelKeys(ctx context.Context, f Filter) ([]string, error) {
	where, args := s.d.where(f)
	rows, err := s.query(ctx, s.r, `SELECT DISTINCT j.key FROM results r, `+s.d.labelKeys()+`
		WHERE r.outcome = 'succeeded' AND `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("label keys: %w", err)
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, fmt.Errorf("label keys: %w", err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("label keys: %w", err)
	}
	sort.Strings(keys)
	return keys, nil
}

// groupKeys are the keys a comparison can be by: the columns, the parts
// of the spec and the given labels.
func groupKeys(labels []string) []string {
	keys := make([]string, 0, len(groupColumns)+len(specFields)+len(labels))
	for k := range groupColumns {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	keys = append(keys, specFields...)
	for _, l := range labels {
		if _, col := groupColumns[l]; !col && !isSpecField(l) {
			keys = append(keys, Printable(l))
		} else {
			keys = append(keys, "label."+Printable(l))
		}
	}
	return keys
}

// testedMetrics checks the metrics to test: known, each once.
func testedMetrics(names []string) ([]string, error) {
	if len(names) == 0 {
		return []string{"rps", "p50", "p99"}, nil
	}
	if len(names) > len(Metrics) {
		return nil, queryErrorf("%d metrics: there are %d (%s)", len(names), len(Metrics), strings.Join(MetricNames(), ", "))
	}
	for i, name := range names {
		if _, ok := MetricByName(name); !ok {
			return nil, queryErrorf("unknown metric %q (want one of %s)", Printable(name), strings.Join(MetricNames(), ", "))
		}
		if slices.Contains(names[:i], name) {
			return nil, queryErrorf("metric %q given twice", name)
		}
	}
	return names, nil
}

// BuildComparison computes a comparison of runs already grouped: one
// table per spec, in the order the specs first appear, and in each the
// groups in the order they first appear.
func BuildComparison(runs []GroupedRun, o CompareOptions) (*Comparison, error) {
	tested, err := testedMetrics(o.Metrics)
	if err != nil {
		return nil, err
	}
	c := &Comparison{By: o.By, Tested: tested, ExcludeThrottled: o.Filter.ExcludeThrottled,
		ExcludeInvalid: o.Filter.ExcludeInvalid, base: o.Base}
	tables := map[string]int{}
	groups := []map[string]int{}
	baseSeen := false
	for i := range runs {
		r := &runs[i]
		spec := r.Spec.without(specPart(o.By))
		k := spec.key()
		ti, ok := tables[k]
		if !ok {
			ti = len(c.Tables)
			tables[k] = ti
			c.Tables = append(c.Tables, Table{Spec: spec})
			groups = append(groups, map[string]int{})
		}
		t := &c.Tables[ti]
		gi, ok := groups[ti][r.Group]
		if !ok {
			gi = len(t.Groups)
			groups[ti][r.Group] = gi
			t.Groups = append(t.Groups, Group{Key: r.Group, values: map[string][]float64{}})
		}
		g := &t.Groups[gi]
		g.N++
		if r.Throttled {
			g.Throttled++
		}
		if r.Invalid {
			g.Invalid++
		}
		if r.GeneratorBound {
			g.GeneratorBound++
		}
		for _, m := range Metrics {
			g.values[m.Name] = append(g.values[m.Name], m.get(&r.RunFigures))
		}
		baseSeen = baseSeen || r.Group == o.Base
	}
	if o.Base != "" && len(runs) > 0 && !baseSeen {
		var keys []string
		for _, t := range c.Tables {
			for _, g := range t.Groups {
				if !slices.Contains(keys, g.Key) {
					keys = append(keys, g.Key)
				}
			}
		}
		return nil, queryErrorf("base group %q has no runs: the groups are %s", Printable(o.Base), Printable(strings.Join(keys, ", ")))
	}
	// One order of the groups across the tables, the order they first
	// appear in: a group has the same place (and colour, on the page) in
	// every table, and without --base the same base, the first group of
	// the page that the table has.
	rank := map[string]int{}
	for i := range runs {
		if _, ok := rank[runs[i].Group]; !ok {
			rank[runs[i].Group] = len(rank)
		}
	}
	for ti := range c.Tables {
		t := &c.Tables[ti]
		sort.SliceStable(t.Groups, func(i, j int) bool { return rank[t.Groups[i].Key] < rank[t.Groups[j].Key] })
		for gi, g := range t.Groups {
			groups[ti][g.Key] = gi
		}
	}
	for ti := range c.Tables {
		t := &c.Tables[ti]
		base := 0
		if o.Base != "" {
			base = -1
			if bi, ok := groups[ti][o.Base]; ok {
				base = bi
			}
		}
		if base >= 0 {
			t.Base = t.Groups[base].Key
		}
		for i := range t.Groups {
			g := &t.Groups[i]
			g.Stats = map[string]GroupStats{}
			for _, m := range Metrics {
				if st := Describe(g.values[m.Name]); st.N > 0 || !m.Sparse {
					g.Stats[m.Name] = st
				}
			}
			if base < 0 || i == base {
				continue
			}
			g.Deltas = map[string]Delta{}
			for _, name := range tested {
				g.Deltas[name] = noDifferenceOfGenerators(Compare(t.Groups[base].values[name], g.values[name]), &t.Groups[base], g)
			}
		}
	}
	return c, nil
}

// shown are the metrics a table shows: all but the sparse ones none of
// its groups has.
func (t *Table) shown() []Metric {
	var out []Metric
	for _, m := range Metrics {
		has := !m.Sparse
		for _, g := range t.Groups {
			_, ok := g.Stats[m.Name]
			has = has || ok
		}
		if has {
			out = append(out, m)
		}
	}
	return out
}

// WriteText writes the comparison as the seeds' tables look, one table per
// spec: a row per group with the median of each figure (for req/s and
// latency with its 95 % interval in ± %) and the total of the counts, then
// the differences from the base group with their interval and p-value,
// "~" when within the noise. What a device supplied (group keys, URLs) is
// written through Printable.
func (c *Comparison) WriteText(w io.Writer) error {
	var b strings.Builder
	if len(c.Tables) == 0 {
		fmt.Fprintf(&b, "no succeeded runs to compare by %s\n", Printable(c.By))
		_, err := io.WriteString(w, b.String())
		return err
	}
	if c.ByNote != "" {
		fmt.Fprintf(&b, "by %s\n", c.ByNote)
	}
	if len(c.Tables) > 1 {
		fmt.Fprintf(&b, "%d specs: runs of different work are compared apart\n\n", len(c.Tables))
	}
	throttled, invalid, infinite, deltas := 0, 0, false, false
	var notes []string
	for ti, t := range c.Tables {
		if ti > 0 {
			b.WriteByte('\n')
		}
		if len(c.Tables) > 1 {
			fmt.Fprintf(&b, "spec %d of %d: %s\n", ti+1, len(c.Tables), Printable(t.Spec.String()))
		} else {
			fmt.Fprintf(&b, "spec: %s\n", Printable(t.Spec.String()))
		}
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		hdr := []string{Printable(c.By), "n"}
		shown := t.shown()
		for _, m := range shown {
			hdr = append(hdr, m.Title)
		}
		fmt.Fprintln(tw, strings.Join(hdr, "\t")+"\t")
		for _, g := range t.Groups {
			row := []string{Printable(g.Key), strconv.Itoa(g.N)}
			if g.Throttled > 0 {
				row[1] += "!"
				throttled += g.Throttled
			}
			if g.Invalid > 0 {
				row[1] += "?"
				invalid += g.Invalid
			}
			for _, m := range shown {
				v, inf := cell(m, g.Stats[m.Name])
				row = append(row, v)
				infinite = infinite || inf
			}
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if len(t.Groups) < 2 {
			continue
		}
		if t.Base == "" {
			fmt.Fprintf(&b, "no differences: %s has no runs of this spec\n", Printable(c.base))
			continue
		}
		var tested []string // those of the table (a sparse one may be absent)
		for _, name := range c.Tested {
			if slices.ContainsFunc(shown, func(m Metric) bool { return m.Name == name }) {
				tested = append(tested, name)
			}
		}
		if len(tested) == 0 {
			continue
		}
		deltas = true
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		hdr = []string{"vs " + Printable(t.Base)}
		for _, name := range tested {
			m, _ := MetricByName(name)
			hdr = append(hdr, m.Title)
		}
		fmt.Fprintln(tw, strings.Join(hdr, "\t"))
		for _, g := range t.Groups {
			if g.Key == t.Base {
				continue
			}
			row := []string{Printable(g.Key)}
			for _, name := range tested {
				d := g.Deltas[name]
				row = append(row, d.String())
				if d.Note != "" && !slices.Contains(notes, d.Note) {
					notes = append(notes, d.Note)
				}
			}
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	b.WriteString("\nreq/s, latency, CPU, IO and mem: medians of the runs of each group, ± the larger side of their 95 % interval; timeouts and errors: totals of the runs\n")
	if infinite {
		fmt.Fprintf(&b, "±∞: fewer than %d runs, too few for a 95 %% interval of the median\n", MedianCIRuns)
	}
	if deltas {
		fmt.Fprintf(&b, "vs: Hodges-Lehmann shift of the medians, its 95 %% interval, Mann-Whitney U p; ~ = not significant at alpha %.2f\n", Alpha)
	}
	switch {
	case throttled > 0:
		fmt.Fprintf(&b, "! %d runs throttled or lost CPU frequency: --exclude-throttled leaves them out\n", throttled)
	case c.ExcludeThrottled:
		b.WriteString("throttled runs excluded\n")
	}
	switch {
	case invalid > 0:
		fmt.Fprintf(&b, "? %d runs not valid by their verdict (edgebench run shows why): --exclude-invalid leaves them out\n", invalid)
	case c.ExcludeInvalid:
		b.WriteString("runs not valid by their verdict excluded\n")
	}
	for _, n := range notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// cell formats what a group shows of m, "-" when absent; for req/s and
// latency with the larger side of its interval in %, "±∞" (and inf
// true) when there are too few runs for one.
func cell(m Metric, s GroupStats) (text string, inf bool) {
	v, lo, hi := m.Shown(s)
	if s.N == 0 || math.IsNaN(v) {
		return "-", false
	}
	text = formatValue(m, v)
	switch m.Name {
	case "rps", "mean", "p50", "p99":
		switch {
		case math.IsNaN(lo):
			return text + " ±∞", true
		case v != 0:
			return text + fmt.Sprintf(" ±%.1f%%", 100*math.Max(hi-v, v-lo)/math.Abs(v)), false
		}
	}
	return text, false
}

// formatValue writes v in m's unit: latencies as µs, ms or s.
func formatValue(m Metric, v float64) string {
	switch m.Unit {
	case "µs":
		switch {
		case v >= 1e6:
			return strconv.FormatFloat(v/1e6, 'f', 2, 64) + "s"
		case v >= 1e3:
			return strconv.FormatFloat(v/1e3, 'f', 2, 64) + "ms"
		}
		return strconv.FormatFloat(v, 'f', 0, 64) + "µs"
	case "":
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// compareParams are the parameters of a comparison asked over HTTP, and
// maxParam the longest value one may have: a query is checked before
// any work (5,000 metrics would cost seconds of CPU).
var compareParams = []string{"by", "metric", "base", "fleet", "device", "cmd", "exclude_throttled", "exclude_invalid"}

const maxParam = 256

// ParseCompareQuery reads a comparison from URL parameters: by, metric
// (comma-separated), base, fleet, device, cmd and exclude_throttled, each
// at most once and at most 256 bytes long. Anything else is a QueryError.
func ParseCompareQuery(q url.Values) (CompareOptions, error) {
	o := CompareOptions{By: q.Get("by"), Base: q.Get("base"), Filter: Filter{Fleet: q.Get("fleet"), Device: q.Get("device"),
		Command: q.Get("cmd"), ExcludeThrottled: q.Get("exclude_throttled") != "",
		ExcludeInvalid: q.Get("exclude_invalid") != ""}}
	if len(q) > len(compareParams) {
		return o, queryErrorf("%d parameters: a comparison takes %s", len(q), strings.Join(compareParams, ", "))
	}
	for k, vs := range q {
		switch {
		case !slices.Contains(compareParams, k):
			return o, queryErrorf("unknown parameter %q: a comparison takes %s", Printable(wire.Clip(k)), strings.Join(compareParams, ", "))
		case len(vs) > 1:
			return o, queryErrorf("%s given %d times: give it once", k, len(vs))
		case len(vs[0]) > maxParam:
			return o, queryErrorf("%s is %d bytes long: at most %d", k, len(vs[0]), maxParam)
		}
	}
	if m := q.Get("metric"); m != "" {
		o.Metrics = strings.Split(m, ",")
	}
	_, err := testedMetrics(o.Metrics)
	return o, err
}

// CompareQuery is Compare of the comparison ParseCompareQuery reads from q.
func (s *Store) CompareQuery(ctx context.Context, q url.Values) (*Comparison, error) {
	o, err := ParseCompareQuery(q)
	if err != nil {
		return nil, err
	}
	return s.Compare(ctx, o)
}
