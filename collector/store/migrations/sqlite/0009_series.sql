-- Each series' state, kept at ingest (store/series.go): a series is one
-- device's succeeded results of one spec with the same labels (but the
-- schedule's). Its latest figures (of the last result received whose runs
-- are valid), its counts (results, left out as not valid, too late for
-- the detector), the change detector's state (state: series_codec.go) and
-- its provisional claims (JSON, '' for none). exported: among the
-- SeriesPerDevice series of its device received last, which /metrics
-- may export.
CREATE TABLE series (
	key TEXT PRIMARY KEY,
	fleet TEXT NOT NULL,
	device TEXT NOT NULL,
	spec TEXT NOT NULL,
	labels TEXT NOT NULL DEFAULT '{}',
	server TEXT NOT NULL DEFAULT '',
	results INTEGER NOT NULL DEFAULT 0,
	left_out INTEGER NOT NULL DEFAULT 0,
	late INTEGER NOT NULL DEFAULT 0,
	latest_id TEXT NOT NULL DEFAULT '',
	latest_started INTEGER NOT NULL DEFAULT 0,
	latest_received INTEGER NOT NULL DEFAULT 0,
	rps REAL,
	p99_us REAL,
	cpu_per_kreq REAL,
	exported INTEGER NOT NULL DEFAULT 1,
	updated INTEGER NOT NULL DEFAULT 0,
	provisional TEXT NOT NULL DEFAULT '',
	state BLOB NOT NULL
);
CREATE INDEX series_device ON series (fleet, device, exported, latest_received);
CREATE INDEX series_exported ON series (latest_received) WHERE exported = 1;
CREATE INDEX series_provisional ON series (fleet, device) WHERE provisional != '';
-- The series each device had left out of /metrics by its cap.
CREATE TABLE series_dropped (
	fleet TEXT NOT NULL,
	device TEXT NOT NULL,
	n INTEGER NOT NULL,
	PRIMARY KEY (fleet, device)
) WITHOUT ROWID;
-- The detector's options (JSON), and the rebuild of every series from the
-- stored results (RebuildSeries): pending while under way, the last
-- device done (the ingest leaves the devices after it to the rebuild).
-- A store with results when this migration runs rebuilds them.
CREATE TABLE series_rebuild (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	options TEXT NOT NULL DEFAULT '{}',
	pending INTEGER NOT NULL DEFAULT 0,
	after_fleet TEXT NOT NULL DEFAULT '',
	after_device TEXT NOT NULL DEFAULT '',
	devices INTEGER NOT NULL DEFAULT 0,
	started_at INTEGER NOT NULL DEFAULT 0,
	done_at INTEGER NOT NULL DEFAULT 0
);
INSERT INTO series_rebuild (id, pending) SELECT 1, CASE WHEN EXISTS (SELECT 1 FROM results) THEN 1 ELSE 0 END;
-- changes: the detector's final changes (kind 'change'), stored once when
-- found, and the alerts raised ('alert': quiet devices, growing spools,
-- and the changes raised before changes were stored), each numbered
-- (seq) and with when an alert was raised for it (alerted_at, 0: not
-- yet; the alert loop reads those).
CREATE TABLE changes_new (
	seq INTEGER PRIMARY KEY AUTOINCREMENT,
	kind TEXT NOT NULL DEFAULT 'alert',
	series TEXT NOT NULL,
	metric TEXT NOT NULL,
	result_id TEXT NOT NULL,
	at INTEGER NOT NULL,
	detected_at INTEGER NOT NULL,
	body TEXT NOT NULL,
	fleet TEXT NOT NULL DEFAULT '',
	device TEXT NOT NULL DEFAULT '',
	alerted_at INTEGER NOT NULL DEFAULT 0,
	UNIQUE (kind, series, metric, result_id)
);
INSERT INTO changes_new (kind, series, metric, result_id, at, detected_at, body, alerted_at)
	SELECT 'alert', series, metric, result_id, at, detected_at, body, detected_at FROM changes ORDER BY detected_at, series, metric, result_id;
DROP TABLE changes;
ALTER TABLE changes_new RENAME TO changes;
CREATE INDEX changes_at ON changes (at);
CREATE INDEX changes_list ON changes (at, seq) WHERE kind = 'change';
CREATE INDEX changes_device ON changes (fleet, device, at, seq) WHERE kind = 'change';
CREATE INDEX changes_unalerted ON changes (seq) WHERE alerted_at = 0;
