-- Schedules: a trigger (its JSON TriggerRequest) fired every every_ns or
-- at the times of a cron expression. next_at (ns) is its next due time.
CREATE TABLE schedules (
	name TEXT PRIMARY KEY,
	every_ns INTEGER NOT NULL DEFAULT 0,
	cron TEXT NOT NULL DEFAULT '',
	jitter_ns INTEGER NOT NULL DEFAULT 0,
	request TEXT NOT NULL,
	paused INTEGER NOT NULL DEFAULT 0,
	next_at INTEGER NOT NULL,
	created_at INTEGER NOT NULL
);
-- One row per firing: the collector that inserts it (schedule, due_at)
-- fires it; another one finds the row there and does not.
CREATE TABLE schedule_runs (
	schedule TEXT NOT NULL,
	due_at INTEGER NOT NULL,
	fired_at INTEGER NOT NULL,
	collector TEXT NOT NULL DEFAULT '',
	commands TEXT NOT NULL DEFAULT '[]',
	devices TEXT NOT NULL DEFAULT '[]',
	missed TEXT NOT NULL DEFAULT '[]',
	error TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (schedule, due_at)
);
CREATE INDEX schedule_runs_fired ON schedule_runs (fired_at);
-- Changes the detector found: one row per series, figure and the first
-- result after the change; whoever inserts it raises the alert.
CREATE TABLE changes (
	series TEXT NOT NULL,
	metric TEXT NOT NULL,
	result_id TEXT NOT NULL,
	at INTEGER NOT NULL,
	detected_at INTEGER NOT NULL,
	body TEXT NOT NULL,
	PRIMARY KEY (series, metric, result_id)
);
CREATE INDEX changes_at ON changes (at);
