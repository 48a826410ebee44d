// Package rebuild maps a stored result back onto the load generator's
// and the probe's types, the other way of package measure's mapping onto
// the wire: LoadResult and SystemReport give the report.LoadResult and
// machine.Report a device printed, so that the collector prints its
// reports line for line; VerdictOf and StableText give its verdict and
// --repeat auto's outcome. It is pure: no store, no clock.
package rebuild
