// Package store keeps what the fleet publishes and what the collector
// sends, in a SQLite file or a PostgreSQL database (Open): the schema of
// each engine (migrations/), every write (Ingest, SetStatus,
// SetHeartbeats, AddCommand, AddEvent) and every read (Devices, Runs,
// Result, Events, GroupRuns, LabelKeys), the figures of each run as
// columns, the verdict and repeat columns and their backfill from the
// payloads, the schedules and their firings, the alerts raised, and the
// pruning of old results (Prune).
//
// Its users each take the few methods they need through an interface of
// their own (compare.Store, for one); the store imports none of them.
package store
