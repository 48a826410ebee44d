// Package collector is edgebench's central side, wired together: Start
// opens the store, starts the embedded broker (or dials an external
// one), takes what the fleet publishes (the ingest: results batched into
// one transaction and acked after their commit, statuses, events,
// heartbeats), sends commands (Trigger, Cancel), serves the web UI and
// its API, and runs the scheduler, the alerts and the retention until
// Close.
//
// Each part it wires is a package of its own under collector/, with one
// job: broker (the embedded broker, its accounts, ACL, login gate and
// quotas), store (every read and write, over its parts: sqldb, both
// engines; seriesdb, scheduledb and retention, its tables by concern),
// compare, series (changes over time), schedules, alerts, metrics and
// web, over the pure ones stats, cron, group, rebuild, summary and
// escape. ARCHITECTURE.md draws them and the rule of who imports whom.
package collector
