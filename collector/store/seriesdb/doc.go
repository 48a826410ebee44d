// Package seriesdb keeps the series in the store's database: each
// device's results of one spec and labels over time, their state as the
// change detector left it (series.go, its bytes codec.go), fed by each
// ingest in its transaction (IngestSeries) or rebuilt from the stored
// results (RebuildSeries), and the changes found in them with their reads
// (ListChanges, ProvisionalChanges, Latest, SeriesDropped, Series).
package seriesdb
