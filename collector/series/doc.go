// Package series finds lasting changes in the fleet's results over time.
// A series is one device's succeeded results of one spec with the same
// labels, in the order they ran (Of); Changes runs the change detector of
// package stats over each series' req/s, p99 and CPU per request, and
// says what else changed around each change (kernel, firmware, server,
// throttling). The alerts, the changes page and /metrics read the series.
package series
