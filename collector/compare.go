package collector

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Metric is one figure a comparison reports.
type Metric struct {
	Name   string // as in --metric
	Title  string // column header
	Unit   string
	Higher bool // higher is better
	get    func(*RunFigures) float64
}

// Metrics are the figures of a comparison, in the order of the seeds'
// tables.
var Metrics = []Metric{
	{"rps", "req/s", "req/s", true, func(f *RunFigures) float64 { return f.RPS }},
	{"mean", "mean", "µs", false, func(f *RunFigures) float64 { return f.MeanUS }},
	{"p50", "p50", "µs", false, func(f *RunFigures) float64 { return f.P50US }},
	{"p99", "p99", "µs", false, func(f *RunFigures) float64 { return f.P99US }},
	{"max", "max", "µs", false, func(f *RunFigures) float64 { return f.MaxUS }},
	{"timeouts", "timeouts", "", false, func(f *RunFigures) float64 { return float64(f.Timeouts) }},
	{"errors", "errors", "", false, func(f *RunFigures) float64 { return float64(f.Errors) }},
	{"cpu", "CPU %", "%", false, func(f *RunFigures) float64 { return f.CPUPct }},
	{"io", "IO KB/s", "KB/s", false, func(f *RunFigures) float64 { return f.IOKBs }},
	{"mem", "mem MB", "MB", false, func(f *RunFigures) float64 { return f.MemKB / 1024 }},
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

// CompareOptions says what to compare.
type CompareOptions struct {
	By      string   // device, a label key or a system-info field
	Metrics []string // figures to test for differences; default rps, p50, p99
	Base    string   // the group others are compared to; default the first seen
	Filter  Filter   // which runs; Filter.ExcludeThrottled leaves throttled runs out
}

// Group is one group of a comparison.
type Group struct {
	Key       string             `json:"key"`
	N         int                `json:"n"`
	Throttled int                `json:"throttled"` // runs flagged as throttled (0 when they were excluded)
	Stats     map[string]Summary `json:"stats"`
	Deltas    map[string]Delta   `json:"deltas,omitempty"` // against the base group, for the tested metrics
	values    map[string][]float64
}

// Comparison is a table of groups and their differences.
type Comparison struct {
	By               string   `json:"by"`
	Base             string   `json:"base"`
	Tested           []string `json:"tested"`
	ExcludeThrottled bool     `json:"exclude_throttled"`
	Groups           []Group  `json:"groups"`
}

// Compare groups the stored runs and compares them.
func (s *Store) Compare(ctx context.Context, o CompareOptions) (*Comparison, error) {
	if o.By == "" {
		o.By = "device"
	}
	runs, err := s.GroupRuns(ctx, o.By, o.Filter)
	if err != nil {
		return nil, err
	}
	return BuildComparison(runs, o)
}

// BuildComparison computes a comparison of runs already grouped. Groups
// keep the order in which they first appear.
func BuildComparison(runs []GroupedRun, o CompareOptions) (*Comparison, error) {
	tested := o.Metrics
	if len(tested) == 0 {
		tested = []string{"rps", "p50", "p99"}
	}
	for _, name := range tested {
		if _, ok := MetricByName(name); !ok {
			return nil, fmt.Errorf("compare: unknown metric %q (want one of %s)", name, strings.Join(MetricNames(), ", "))
		}
	}
	c := &Comparison{By: o.By, Tested: tested, ExcludeThrottled: o.Filter.ExcludeThrottled}
	index := map[string]int{}
	for i := range runs {
		r := &runs[i]
		gi, ok := index[r.Group]
		if !ok {
			gi = len(c.Groups)
			index[r.Group] = gi
			c.Groups = append(c.Groups, Group{Key: r.Group, values: map[string][]float64{}})
		}
		g := &c.Groups[gi]
		g.N++
		if r.Throttled {
			g.Throttled++
		}
		for _, m := range Metrics {
			g.values[m.Name] = append(g.values[m.Name], m.get(&r.RunFigures))
		}
	}
	if len(c.Groups) == 0 {
		return c, nil
	}
	base := 0
	if o.Base != "" {
		bi, ok := index[o.Base]
		if !ok {
			return nil, fmt.Errorf("compare: base group %q has no runs", o.Base)
		}
		base = bi
	}
	c.Base = c.Groups[base].Key
	for i := range c.Groups {
		g := &c.Groups[i]
		g.Stats = map[string]Summary{}
		for _, m := range Metrics {
			g.Stats[m.Name] = Summarize(g.values[m.Name])
		}
		if i == base {
			continue
		}
		g.Deltas = map[string]Delta{}
		for _, name := range tested {
			g.Deltas[name] = Compare(c.Groups[base].values[name], g.values[name])
		}
	}
	return c, nil
}

// WriteText writes the comparison as the seeds' tables look: one row per
// group with the median of each figure (and, for req/s and latency, the
// 95 % interval of the mean in ± %), then the differences from the base
// group with their interval and p-value, "~" when within the noise.
func (c *Comparison) WriteText(w io.Writer) error {
	var b strings.Builder
	if len(c.Groups) == 0 {
		fmt.Fprintf(&b, "no succeeded runs to compare by %s\n", c.By)
		_, err := io.WriteString(w, b.String())
		return err
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	hdr := []string{c.By, "n"}
	for _, m := range Metrics {
		hdr = append(hdr, m.Title)
	}
	fmt.Fprintln(tw, strings.Join(hdr, "\t")+"\t")
	throttled := 0
	for _, g := range c.Groups {
		row := []string{g.Key, strconv.Itoa(g.N)}
		if g.Throttled > 0 {
			row[1] += "!"
			throttled += g.Throttled
		}
		for _, m := range Metrics {
			row = append(row, cell(m, g.Stats[m.Name]))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b.WriteString("medians; ± is the 95 % interval of the mean\n")
	switch {
	case throttled > 0:
		fmt.Fprintf(&b, "! %d runs throttled or lost CPU frequency: --exclude-throttled leaves them out\n", throttled)
	case c.ExcludeThrottled:
		b.WriteString("throttled runs excluded\n")
	}
	if len(c.Groups) > 1 {
		fmt.Fprintf(&b, "\nvs %s (Hodges-Lehmann shift of medians, 95 %% interval, Mann-Whitney U p; ~ = not significant at alpha %.2f)\n", c.Base, Alpha)
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		hdr = []string{c.By}
		for _, name := range c.Tested {
			m, _ := MetricByName(name)
			hdr = append(hdr, m.Title)
		}
		fmt.Fprintln(tw, strings.Join(hdr, "\t"))
		var notes []string
		for _, g := range c.Groups {
			if g.Key == c.Base {
				continue
			}
			row := []string{g.Key}
			for _, name := range c.Tested {
				d := g.Deltas[name]
				row = append(row, d.String())
				if d.Note != "" && !contains(notes, d.Note) {
					notes = append(notes, d.Note)
				}
			}
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, n := range notes {
			fmt.Fprintf(&b, "note: %s\n", n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// cell formats a group's median of m, "-" when absent.
func cell(m Metric, s Summary) string {
	if s.N == 0 || math.IsNaN(s.Median) {
		return "-"
	}
	v := formatValue(m, s.Median)
	switch m.Name {
	case "rps", "mean", "p50", "p99":
		if s.N > 1 && s.Mean != 0 {
			v += fmt.Sprintf(" ±%.1f%%", 100*(s.CIHigh-s.Mean)/math.Abs(s.Mean))
		}
	}
	return v
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
