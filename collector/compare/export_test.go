package compare

import "github.com/edgebench/edgebench/collector/stats"

// What the tests of package compare_test reach inside compare.

// Cell is what a table's cell shows of m for a group of stats s, and
// whether it is an interval too wide to state.
func Cell(m Metric, s stats.GroupStats) (string, bool) { return cell(m, s) }

// Shown are the metrics t shows.
func (t *Table) Shown() []Metric { return t.shown(nil) }
