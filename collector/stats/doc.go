// Package stats holds the statistics of the collector's conclusions,
// pure functions of lists of figures: a group's description (Describe:
// median with its 95 % interval, mean, spread), the difference of two
// groups as benchstat reports it (Compare: the Hodges-Lehmann shift with
// Moses' interval and the Mann-Whitney U test), and the change detector
// that finds lasting shifts in a series of figures (DetectChanges).
package stats
