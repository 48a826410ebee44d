// Package figures computes the summary figures of one measured window
// from its payload (Of): req/s, the latency's mean, p50, p99 and maximum
// from its histogram, the errors (ErrorTotal, the one definition of the
// collector's), CPU, disk IO, memory and temperature from the probe's
// summary. The store keeps them as the columns of a run, compare works
// on them and the run page shows them. It is pure.
package figures
