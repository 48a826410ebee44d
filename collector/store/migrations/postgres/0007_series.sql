-- Each series' state, kept at ingest (store/series.go): a series is one
-- device's succeeded results of one spec with the same labels (but the
-- schedule's). Its latest figures (of the last result received whose runs
-- are valid), its counts (results, left out as not valid, too late for
-- the detector), the change detector's state (state: series_codec.go) and
-- its provisional claims (JSON, '' for none). exported: among the
-- SeriesPerDevice series of its device received last, which /metrics
-- may export.
CREATE TABLE series (
	key TEXT COLLATE "C" PRIMARY KEY,
	fleet TEXT COLLATE "C" NOT NULL,
	device TEXT COLLATE "C" NOT NULL,
	spec TEXT NOT NULL,
	labels TEXT NOT NULL DEFAULT '{}',
	server TEXT NOT NULL DEFAULT '',
	results BIGINT NOT NULL DEFAULT 0,
	left_out BIGINT NOT NULL DEFAULT 0,
	late BIGINT NOT NULL DEFAULT 0,
	latest_id TEXT NOT NULL DEFAULT '',
	latest_started BIGINT NOT NULL DEFAULT 0,
	latest_received BIGINT NOT NULL DEFAULT 0,
	rps DOUBLE PRECISION,
	p99_us DOUBLE PRECISION,
	cpu_per_kreq DOUBLE PRECISION,
	exported INTEGER NOT NULL DEFAULT 1,
	updated BIGINT NOT NULL DEFAULT 0,
	provisional TEXT NOT NULL DEFAULT '',
	state BYTEA NOT NULL
);
CREATE INDEX series_device ON series (fleet, device, exported, latest_received);
CREATE INDEX series_exported ON series (latest_received) WHERE exported = 1;
CREATE INDEX series_provisional ON series (fleet, device) WHERE provisional != '';
-- The series each device had left out of /metrics by its cap.
CREATE TABLE series_dropped (
	fleet TEXT COLLATE "C" NOT NULL,
	device TEXT COLLATE "C" NOT NULL,
	n BIGINT NOT NULL,
	PRIMARY KEY (fleet, device)
);
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
	devices BIGINT NOT NULL DEFAULT 0,
	started_at BIGINT NOT NULL DEFAULT 0,
	done_at BIGINT NOT NULL DEFAULT 0
);
INSERT INTO series_rebuild (id, pending) SELECT 1, CASE WHEN EXISTS (SELECT 1 FROM results) THEN 1 ELSE 0 END;
-- changes: the detector's final changes (kind 'change'), stored once when
-- found, and the alerts raised ('alert': quiet devices, growing spools,
-- and the changes raised before changes were stored), each numbered
-- (seq) and with when an alert was raised for it (alerted_at, 0: not
-- yet; the alert loop reads those).
ALTER TABLE changes ADD COLUMN seq BIGSERIAL;
ALTER TABLE changes ADD COLUMN kind TEXT NOT NULL DEFAULT 'alert';
ALTER TABLE changes ADD COLUMN fleet TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE changes ADD COLUMN device TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE changes ADD COLUMN alerted_at BIGINT NOT NULL DEFAULT 0;
UPDATE changes SET alerted_at = detected_at;
ALTER TABLE changes DROP CONSTRAINT changes_pkey;
ALTER TABLE changes ADD PRIMARY KEY (seq);
ALTER TABLE changes ADD CONSTRAINT changes_kind_series_metric_result_id_key UNIQUE (kind, series, metric, result_id);
CREATE INDEX changes_list ON changes (at, seq) WHERE kind = 'change';
CREATE INDEX changes_device ON changes (fleet, device, at, seq) WHERE kind = 'change';
CREATE INDEX changes_unalerted ON changes (seq) WHERE alerted_at = 0;
