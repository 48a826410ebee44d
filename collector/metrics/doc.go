// Package metrics serves the collector's figures for Prometheus at
// /metrics: the ingest's counts and batches, the broker's refusals, the
// alerts', and, read from the store at each scrape (at most every 10 s),
// the devices online, their spools, the schedules and the latest figures
// of each series, under bounded labels.
package metrics
