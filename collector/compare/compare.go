package compare

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/edgebench/edgebench/collector/escape"
	"github.com/edgebench/edgebench/collector/figures"
	"github.com/edgebench/edgebench/collector/group"
	"github.com/edgebench/edgebench/collector/stats"
	"github.com/edgebench/edgebench/collector/store"
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
	// OptIn: shown only when --columns names it (or a preset does).
	OptIn bool
	// Peak: a group shows the highest of its runs' values, not their
	// median (the differences still compare the runs' values).
	Peak bool
	Note string // what the column is, when its title does not say
	get  func(*figures.Run) float64
}

// metrics are the figures of a comparison, in the order of the seeds'
// tables.
var metrics = []Metric{
	{Name: "rps", Title: "req/s", Unit: "req/s", Higher: true, get: func(f *figures.Run) float64 { return f.RPS }},
	{Name: "mean", Title: "mean", Unit: "µs", get: func(f *figures.Run) float64 { return f.MeanUS }},
	{Name: "p50", Title: "p50", Unit: "µs", get: func(f *figures.Run) float64 { return f.P50US }},
	{Name: "p99", Title: "p99", Unit: "µs", get: func(f *figures.Run) float64 { return f.P99US }},
	{Name: "stdev", Title: "stdev", Unit: "µs", OptIn: true, Note: "the latency's standard deviation within each run (wrk's Stdev)",
		get: func(f *figures.Run) float64 { return f.StdevUS }},
	{Name: "max", Title: "max", Unit: "µs", Note: "each run's highest latency; the group's median of them (peak: the highest of all)",
		get: func(f *figures.Run) float64 { return f.MaxUS }},
	{Name: "peak", Title: "peak", Unit: "µs", OptIn: true, Peak: true, Note: "the highest latency of any run of the group, not a median",
		get: func(f *figures.Run) float64 { return f.MaxUS }},
	{Name: "requests", Title: "requests", Count: true, OptIn: true, Note: "responses received in the runs' measured windows",
		get: func(f *figures.Run) float64 { return float64(f.Completed) }},
	{Name: "timeouts", Title: "timeouts", Count: true, get: func(f *figures.Run) float64 { return float64(f.Timeouts) }},
	{Name: "errors", Title: "errors", Count: true, get: func(f *figures.Run) float64 { return float64(f.Errors) }},
	{Name: "cpu", Title: "CPU %", Unit: "%", Note: "the machine's busy share, all cores (100 % less idle and iowait)",
		get: func(f *figures.Run) float64 { return f.CPUPct }},
	{Name: "cpu_user", Title: "user %", Unit: "%", OptIn: true, Note: "the machine's user and nice share, all cores",
		get: func(f *figures.Run) float64 { return f.CPUUser }},
	{Name: "cpu_idle", Title: "idle %", Unit: "%", OptIn: true, Note: "the machine's idle share, all cores (iowait apart)",
		get: func(f *figures.Run) float64 { return f.CPUIdle }},
	{Name: "server_cpu", Title: "server CPU %", Unit: "%", Sparse: true,
		Note: "the server's processes with what they hand their work to (php-fpm behind nginx), % of one core",
		get:  func(f *figures.Run) float64 { return f.ServerCPU }},
	{Name: "io", Title: "IO KB/s", Unit: "KB/s", get: func(f *figures.Run) float64 { return f.IOKBs }},
	{Name: "mem", Title: "mem MB", Unit: "MB", get: func(f *figures.Run) float64 { return f.MemKB / 1024 }},
	{Name: "capacity", Title: "capacity", Unit: "req/s", Higher: true, Sparse: true, get: func(f *figures.Run) float64 { return f.CapacityRPS }},
}

// MetricByName finds a metric by its --metric name.
func MetricByName(name string) (Metric, bool) {
	for _, m := range metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// MetricNames lists the --metric names.
func MetricNames() []string {
	var out []string
	for _, m := range metrics {
		out = append(out, m.Name)
	}
	return out
}

// Shown is the figure a group's table cell and chart bar show for m, with
// its 95 % interval: the median and the interval of the median, or for a
// count the total of the runs (no interval: NaN).
func (m Metric) Shown(s stats.GroupStats) (v, lo, hi float64) {
	if m.Peak {
		if s.N == 0 {
			return math.NaN(), math.NaN(), math.NaN()
		}
		return s.Max, math.NaN(), math.NaN()
	}
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

// Options say what to compare.
type Options struct {
	By      string       // device, a label key, a system-info field or a part of the spec
	Metrics []string     // figures to test for differences; default rps, p50, p99
	Base    string       // the group others are compared to; default the first seen
	Filter  store.Filter // which runs; Filter.ExcludeThrottled leaves throttled runs out
	// Columns are the metrics the tables show, in order; nil: the
	// default ones (ParseColumns).
	Columns []string
	// SamePath compares one page served by different hosts as one spec:
	// URLs count by their path (the tables say which hosts).
	SamePath bool
	// MaxRuns is the most runs to read, the newest received (a request's
	// cost is bounded whatever the history holds); 0: DefaultMaxRuns,
	// below 0: no bound.
	MaxRuns int
}

// Group is one group of a comparison table.
type Group struct {
	Key       string `json:"key"`
	N         int    `json:"n"`
	Throttled int    `json:"throttled"` // runs flagged as throttled (0 when they were excluded)
	// Invalid counts the runs whose verdict says their figure does not
	// stand, GeneratorBound those the load generator limited.
	Invalid        int                         `json:"invalid"`
	GeneratorBound int                         `json:"generator_bound"`
	Stats          map[string]stats.GroupStats `json:"stats"`
	Deltas         map[string]stats.Delta      `json:"deltas,omitempty"` // against the base group, for the tested metrics
	values         map[string][]float64
}

// Table compares the groups of the runs of one spec (less the part the
// comparison is by, when it is one): runs of different work are never in
// one table.
type Table struct {
	Spec   group.Spec `json:"spec"`
	Base   string     `json:"base"` // "" when the base group asked for has no runs of this spec
	Groups []Group    `json:"groups"`
	// Hosts are the scheme and host of each URL of the table's runs, in
	// the order they first appear, with SamePath.
	Hosts []string `json:"hosts,omitempty"`
}

// Comparison is one table per spec of groups and their differences.
type Comparison struct {
	By               string   `json:"by"`
	Tested           []string `json:"tested"`
	ExcludeThrottled bool     `json:"exclude_throttled"`
	ByNote           string   `json:"by_note,omitempty"` // which of a label and a field of one name the groups are by
	ExcludeInvalid   bool     `json:"exclude_invalid"`
	Tables           []Table  `json:"tables"`
	Columns          []string `json:"columns,omitempty"`
	SamePath         bool     `json:"same_path,omitempty"`
	// Capped, when not 0, is the number of runs compared: the newest
	// received, as far as MaxRuns (and one), of more that matched.
	Capped  int    `json:"capped,omitempty"`
	MaxRuns int    `json:"max_runs,omitempty"`
	base    string // the base group asked for, if any
}

// Build computes a comparison of runs already grouped: one
// table per spec, in the order the specs first appear, and in each the
// groups in the order they first appear.
func Build(runs []store.GroupedRun, o Options) (*Comparison, error) {
	tested, err := testedMetrics(o.Metrics)
	if err != nil {
		return nil, err
	}
	c := &Comparison{By: o.By, Tested: tested, ExcludeThrottled: o.Filter.ExcludeThrottled,
		ExcludeInvalid: o.Filter.ExcludeInvalid, Columns: o.Columns, SamePath: o.SamePath, base: o.Base}
	tables := map[string]int{}
	groups := []map[string]int{}
	baseSeen := false
	for i := range runs {
		r := &runs[i]
		spec := r.Spec.Without(group.SpecPartOf(o.By))
		host := ""
		if o.SamePath {
			spec, host = samePath(spec)
		}
		k := spec.Key()
		ti, ok := tables[k]
		if !ok {
			ti = len(c.Tables)
			tables[k] = ti
			c.Tables = append(c.Tables, Table{Spec: spec})
			groups = append(groups, map[string]int{})
		}
		t := &c.Tables[ti]
		if host != "" && !slices.Contains(t.Hosts, host) {
			t.Hosts = append(t.Hosts, host)
		}
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
		for _, m := range metrics {
			g.values[m.Name] = append(g.values[m.Name], m.get(&r.Run))
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
		return nil, queryErrorf("base group %q has no runs: the groups are %s", escape.Printable(o.Base), escape.Printable(strings.Join(keys, ", ")))
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
			g.Stats = map[string]stats.GroupStats{}
			for _, m := range metrics {
				if st := stats.Describe(g.values[m.Name]); st.N > 0 || !m.Sparse {
					g.Stats[m.Name] = st
				}
			}
			if base < 0 || i == base {
				continue
			}
			g.Deltas = map[string]stats.Delta{}
			for _, name := range tested {
				g.Deltas[name] = noDifferenceOfGenerators(stats.Compare(t.Groups[base].values[name], g.values[name]), &t.Groups[base], g)
			}
		}
	}
	return c, nil
}
