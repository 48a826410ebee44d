-- Runs across two devices (issue 30): one device loads, another serves
-- and watches itself, and the collector joins both into one result under
-- the server's device. results.loader is the loading device of a joined
-- result (fleet/id; '' for a run of one device). events.window_edge is a
-- loader's window event ("start:0", "end:0"), which the collector relays
-- to the target's watch. pairs is each run across two devices as the
-- collector drives it (its id the load's command id); pair_parts the
-- results of both devices, held apart until they are joined, so that
-- neither is ever stored as a result of its own.
ALTER TABLE results ADD COLUMN loader TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN window_edge TEXT NOT NULL DEFAULT '';
CREATE TABLE pairs (
	id TEXT PRIMARY KEY,
	watch_id TEXT NOT NULL UNIQUE,
	fleet TEXT NOT NULL,
	loader TEXT NOT NULL,
	target_fleet TEXT NOT NULL,
	target TEXT NOT NULL,
	kind TEXT NOT NULL,
	state TEXT NOT NULL,
	reason TEXT NOT NULL DEFAULT '',
	result_id TEXT NOT NULL DEFAULT '',
	cancel INTEGER NOT NULL DEFAULT 0,
	request TEXT NOT NULL DEFAULT '{}',
	created INTEGER NOT NULL,
	updated INTEGER NOT NULL,
	deadline INTEGER NOT NULL
);
CREATE INDEX pairs_created ON pairs (created);
CREATE INDEX pairs_open ON pairs (deadline) WHERE state NOT IN ('succeeded', 'failed', 'cancelled');
CREATE TABLE pair_parts (
	result_id TEXT PRIMARY KEY,
	pair_id TEXT NOT NULL,
	role TEXT NOT NULL,
	fleet TEXT NOT NULL,
	device TEXT NOT NULL,
	received INTEGER NOT NULL,
	raw BLOB NOT NULL
);
CREATE INDEX pair_parts_pair ON pair_parts (pair_id);
CREATE INDEX pair_parts_received ON pair_parts (received);
