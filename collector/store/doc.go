// Package store keeps what the fleet publishes and what the collector
// sends, in a SQLite file or a PostgreSQL database (Open): every write of
// the results, devices, commands and events (Ingest, SetStatus,
// SetHeartbeats, AddCommand, AddEvent, the pairs' parts) and every read
// of them (Devices, Runs, Result, Events, GroupRuns, LabelKeys), the
// figures of each run as columns, the verdict and repeat columns and
// their backfill from the payloads.
//
// A Store holds its parts, each a package of its own under store/: sqldb
// opens the engines, migrates them and runs the statements; seriesdb
// keeps the series and their changes (fed in the ingest's transaction);
// scheduledb the schedules, their firings and the alerts raised;
// retention the samples' days and the pruning of old results (Retain).
// Their methods are the Store's.
//
// Its users each take the few methods they need through an interface of
// their own (compare.Store, for one); the store imports none of them.
package store
