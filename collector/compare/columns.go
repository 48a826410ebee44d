package compare

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/edgebench/edgebench/collector/escape"
	"github.com/edgebench/edgebench/collector/group"
)

// This file says which columns a comparison's tables show (--columns)
// and what each is, and compares one page served by different hosts
// (--same-path).

// Presets of --columns, by name.
var presets = map[string][]string{
	// The seeds' tables (000: nginx against kangle under wrk): mean
	// latency, its standard deviation, the maximum, the requests, the
	// timeouts, the CPU's user and idle shares.
	"seed": {"mean", "stdev", "peak", "requests", "timeouts", "cpu_user", "cpu_idle"},
}

// PresetNames are the names --columns takes besides metric names.
func PresetNames() []string { return []string{"default", "seed", "all"} }

// ParseColumns reads --columns: comma-separated metric names, or a preset
// (seed: the seeds' table; all; default: what the tables show unless
// told). nil means the default.
func ParseColumns(s string) ([]string, error) {
	switch s {
	case "", "default":
		return nil, nil
	case "all":
		return MetricNames(), nil
	}
	if p, ok := presets[s]; ok {
		return slices.Clone(p), nil
	}
	names := strings.Split(s, ",")
	if len(names) > len(metrics) {
		return nil, queryErrorf("%d columns: there are %d (%s)", len(names), len(metrics), strings.Join(MetricNames(), ", "))
	}
	for i, name := range names {
		if _, ok := MetricByName(name); !ok {
			return nil, queryErrorf("unknown column %q: want metrics of %s, or one of %s", escape.Printable(name),
				strings.Join(MetricNames(), ", "), strings.Join(PresetNames(), ", "))
		}
		if slices.Contains(names[:i], name) {
			return nil, queryErrorf("column %q given twice", name)
		}
	}
	return names, nil
}

// shown are the metrics a table shows: those of columns in their order,
// or by default every metric but the opt-in ones and the sparse ones none
// of its groups has.
func (t *Table) shown(columns []string) []Metric {
	var out []Metric
	if columns != nil {
		for _, name := range columns {
			if m, ok := MetricByName(name); ok {
				out = append(out, m)
			}
		}
		return out
	}
	for _, m := range metrics {
		has := !m.Sparse && !m.OptIn
		if m.Sparse && !m.OptIn {
			for _, g := range t.Groups {
				_, ok := g.Stats[m.Name]
				has = has || ok
			}
		}
		if has {
			out = append(out, m)
		}
	}
	return out
}

// columnsNote says what each shown column is, one line per kind.
func columnsNote(shown []Metric) []string {
	has := func(names ...string) []string {
		var out []string
		for _, m := range shown {
			if slices.Contains(names, m.Name) {
				out = append(out, m.Title)
			}
		}
		return out
	}
	var lines []string
	if l := has("rps", "mean", "p50", "p99", "stdev", "max", "cpu", "cpu_user", "cpu_idle", "server_cpu", "io", "mem", "capacity"); len(l) > 0 {
		lines = append(lines, strings.Join(l, ", ")+": medians of the runs of each group, ± the larger side of their 95 % interval")
	}
	if l := has("timeouts", "errors", "requests"); len(l) > 0 {
		lines = append(lines, strings.Join(l, ", ")+": totals of the runs")
	}
	for _, m := range shown {
		if m.Note != "" {
			lines = append(lines, m.Title+": "+m.Note)
		}
	}
	return lines
}

// samePath is the spec with its URL cut to the path (and query), and the
// scheme and host it was cut from: --same-path compares one page served
// by different hosts (the Pi, the laptop, a remote server) in one table.
func samePath(s group.Spec) (group.Spec, string) {
	u, err := url.Parse(s.URL)
	if err != nil || u.Host == "" {
		return s, ""
	}
	host := u.Scheme + "://" + u.Host
	u.Scheme, u.Host, u.User = "", "", nil
	s.URL = u.String()
	if s.URL == "" {
		s.URL = "/"
	}
	return s, host
}

// hostsNote says which hosts a table of --same-path joined, or, without
// it, which tables differ only in their host.
func (c *Comparison) hostsNote() string {
	if c.SamePath {
		return ""
	}
	byPath := map[string][]string{}
	var order []string
	for _, t := range c.Tables {
		p, host := samePath(t.Spec)
		if host == "" {
			continue
		}
		k := p.Key()
		if _, ok := byPath[k]; !ok {
			order = append(order, k)
		}
		byPath[k] = append(byPath[k], host)
	}
	for _, k := range order {
		if hosts := byPath[k]; len(hosts) > 1 {
			return fmt.Sprintf("%d tables differ only in their host (%s): --same-path compares one page on different hosts in one table",
				len(hosts), escape.Printable(strings.Join(hosts, ", ")))
		}
	}
	return ""
}
