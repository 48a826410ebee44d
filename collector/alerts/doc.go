// Package alerts raises the collector's alerts: a lasting change in a
// series (the final changes the store keeps as results arrive, read
// since the last pass: Store.ChangesToAlert), a device gone quiet, a
// schedule's firing that missed devices, a spool that keeps growing.
// Each is claimed once among the collectors sharing a store
// (Store.ClaimChange, Store.ClaimAlert), published on MQTT
// under <prefix>/<fleet>/_alerts/<kind>/<subject> and posted to the
// webhook from a queue of its own, so that an alert never waits in the
// ingest's way.
package alerts
