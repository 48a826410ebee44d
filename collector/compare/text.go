package compare

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/edgebench/edgebench/collector/escape"
	"github.com/edgebench/edgebench/collector/stats"
)

// This file writes a comparison as text, as the seeds' tables look.

// WriteText writes the comparison as the seeds' tables look, one table per
// spec: a row per group with the median of each figure (for req/s and
// latency with its 95 % interval in ± %) and the total of the counts, then
// the differences from the base group with their interval and p-value,
// "~" when within the noise. What a device supplied (group keys, URLs) is
// written through Printable.
func (c *Comparison) WriteText(w io.Writer) error {
	var b strings.Builder
	if len(c.Tables) == 0 {
		fmt.Fprintf(&b, "no succeeded runs to compare by %s\n", escape.Printable(c.By))
		_, err := io.WriteString(w, b.String())
		return err
	}
	if c.ByNote != "" {
		fmt.Fprintf(&b, "by %s\n", c.ByNote)
	}
	if len(c.Tables) > 1 {
		fmt.Fprintf(&b, "%d specs: runs of different work are compared apart\n\n", len(c.Tables))
	}
	throttled, invalid, infinite, deltas, shifts := 0, 0, false, false, false
	var columns []Metric // shown by any table
	var notes []string
	for ti, t := range c.Tables {
		if ti > 0 {
			b.WriteByte('\n')
		}
		if len(c.Tables) > 1 {
			fmt.Fprintf(&b, "spec %d of %d: %s\n", ti+1, len(c.Tables), escape.Printable(t.Spec.String()))
		} else {
			fmt.Fprintf(&b, "spec: %s\n", escape.Printable(t.Spec.String()))
		}
		if len(t.Hosts) > 0 {
			fmt.Fprintf(&b, "the same path on %d hosts (--same-path): %s\n", len(t.Hosts), escape.Printable(strings.Join(t.Hosts, ", ")))
		}
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		hdr := []string{escape.Printable(c.By), "n"}
		shown := t.shown(c.Columns)
		for _, m := range shown {
			if !slices.ContainsFunc(columns, func(o Metric) bool { return o.Name == m.Name }) {
				columns = append(columns, m)
			}
		}
		for _, m := range shown {
			hdr = append(hdr, m.Title)
		}
		fmt.Fprintln(tw, strings.Join(hdr, "\t")+"\t")
		for _, g := range t.Groups {
			row := []string{escape.Printable(g.Key), strconv.Itoa(g.N)}
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
			fmt.Fprintf(&b, "no differences: %s has no runs of this spec\n", escape.Printable(c.base))
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
		hdr = []string{"vs " + escape.Printable(t.Base)}
		for _, name := range tested {
			m, _ := MetricByName(name)
			hdr = append(hdr, m.Title)
		}
		fmt.Fprintln(tw, strings.Join(hdr, "\t"))
		for _, g := range t.Groups {
			if g.Key == t.Base {
				continue
			}
			row := []string{escape.Printable(g.Key)}
			for _, name := range tested {
				d := g.Deltas[name]
				row = append(row, d.String())
				shifts = shifts || d.PctOf == stats.PctOfShift
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
	b.WriteByte('\n')
	for _, l := range columnsNote(columns) {
		b.WriteString(l + "\n")
	}
	if n := c.hostsNote(); n != "" {
		b.WriteString("note: " + n + "\n")
	}
	if infinite {
		fmt.Fprintf(&b, "±∞: fewer than %d runs, too few for a 95 %% interval of the median\n", stats.MedianCIRuns)
	}
	if deltas {
		fmt.Fprintf(&b, "vs: the change in %%, exp(Hodges-Lehmann shift of the logarithms) - 1 (a ratio, never -100 %% or below), its 95 %% interval, Mann-Whitney U p; ~ = not significant at alpha %.2f\n", stats.Alpha)
		if shifts {
			b.WriteString("    a figure with a 0 has no logarithm: its change is the Hodges-Lehmann shift in % of the base median, at least -100 %\n")
		}
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
	if c.Capped > 0 {
		fmt.Fprintf(&b, "capped: only the newest %d runs received are compared (at most %d are read): older ones match too; "+
			"narrow with --since, --fleet, --device, --label or --cmd, or raise --max-runs\n", c.Capped, c.MaxRuns)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// cell formats what a group shows of m, "-" when absent; for req/s and
// latency with the larger side of its interval in %, "±∞" (and inf
// true) when there are too few runs for one.
func cell(m Metric, s stats.GroupStats) (text string, inf bool) {
	v, lo, hi := m.Shown(s)
	if s.N == 0 || math.IsNaN(v) {
		return "-", false
	}
	text = FormatValue(m, v)
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

// FormatValue writes v in m's unit: latencies as µs, ms or s.
func FormatValue(m Metric, v float64) string {
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
