package compare

import "github.com/edgebench/edgebench/collector/stats"

// noDifferenceOfGenerators withdraws a significant difference between
// two groups when a run of either was limited by the load generator:
// its figure is a lower bound of the server's, not the server's.
func noDifferenceOfGenerators(d stats.Delta, base, other *Group) stats.Delta {
	if base.GeneratorBound == 0 && other.GeneratorBound == 0 {
		return d
	}
	d.Significant = false
	d.Note = "runs limited by the load generator (their figure is a lower bound): no difference is stated"
	return d
}
