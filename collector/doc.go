// Package collector is edgebench's central side: it stores the devices,
// commands, events and results the fleet publishes (Store, a SQLite file),
// compares groups of runs with honest statistics (Compare, MannWhitneyU,
// HodgesLehmann), serves the web UI (Handler) and ties them to MQTT
// (Collector: an embedded broker with authentication and ACLs, or an
// external one).
//
// A comparison groups runs by device, run label or system-info field and
// reports, per figure, each group's median and spread and the difference
// from the first group in %, with a 95 % interval and a Mann-Whitney U
// verdict at alpha 0.05 ("~" when the difference is within the noise), as
// benchstat does.
package collector
