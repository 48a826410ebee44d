-- Runs across two devices (issue 30): as SQLite's migration of the same
-- name, in PostgreSQL's types.
ALTER TABLE results ADD COLUMN loader TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN window_edge TEXT NOT NULL DEFAULT '';
CREATE TABLE pairs (
	id TEXT COLLATE "C" PRIMARY KEY,
	watch_id TEXT COLLATE "C" NOT NULL UNIQUE,
	fleet TEXT NOT NULL,
	loader TEXT NOT NULL,
	target_fleet TEXT NOT NULL,
	target TEXT NOT NULL,
	kind TEXT NOT NULL,
	state TEXT NOT NULL,
	reason TEXT NOT NULL DEFAULT '',
	result_id TEXT NOT NULL DEFAULT '',
	cancel BOOLEAN NOT NULL DEFAULT false,
	request TEXT NOT NULL DEFAULT '{}',
	created BIGINT NOT NULL,
	updated BIGINT NOT NULL,
	deadline BIGINT NOT NULL
);
CREATE INDEX pairs_created ON pairs (created);
CREATE INDEX pairs_open ON pairs (deadline) WHERE state NOT IN ('succeeded', 'failed', 'cancelled');
CREATE TABLE pair_parts (
	result_id TEXT COLLATE "C" PRIMARY KEY,
	pair_id TEXT COLLATE "C" NOT NULL,
	role TEXT NOT NULL,
	fleet TEXT NOT NULL,
	device TEXT NOT NULL,
	received BIGINT NOT NULL,
	raw BYTEA NOT NULL
);
CREATE INDEX pair_parts_pair ON pair_parts (pair_id);
CREATE INDEX pair_parts_received ON pair_parts (received);
