// Package retention keeps the store's database within --keep and
// --keep-samples: it makes the tables of result_samples by day ahead
// (PrepareDays, EnsureDays: PostgreSQL's partitions; SQLite has one
// table) and prunes the results, commands, events, pairs, firings and
// changes older than --keep and the samples older than --keep-samples
// (Retain).
//
// Samples apart from summaries. A result's per-second samples (its runs'
// timelines and probe samples) and its histograms are most of its bytes
// (5.6 KB of the 6.3 KB payload of a 30 s run with the probe) and are worth keeping for
// weeks; its summary (the figures, the fingerprint, the verdicts, the
// probe's summary over the window) is worth keeping for years. The store
// keeps them as Prometheus' or InfluxDB's users keep raw and downsampled
// data: the payload as it came in result_samples, pruned after
// --keep-samples (on PostgreSQL a table per day, dropped whole), and the
// result without its bulk in results.raw (summary set), pruned after
// --keep. A result without bulk keeps its payload in results.raw alone,
// as every result stored before did (the samples_legacy list holds those,
// which pruning rewrites as summaries once they are old enough).
package retention
