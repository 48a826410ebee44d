-- A fleet's history at scale (issue 29): SQLite's migration 10 in
-- PostgreSQL's types, with the samples partitioned by day.
--
-- The figures of the seeds' tables that compare shows beside the others,
-- per run: the latency's standard deviation, the CPU's idle share and the
-- server's CPU (its rows of role server and upstream summed, % of one
-- core). NULL for what was recorded without them; the results stored
-- before are listed in runs_backfill, whose runs opening the store fills
-- from their payloads, emptying the list.
ALTER TABLE runs ADD COLUMN stdev_us DOUBLE PRECISION;
ALTER TABLE runs ADD COLUMN cpu_idle_pct DOUBLE PRECISION;
ALTER TABLE runs ADD COLUMN server_cpu_pct DOUBLE PRECISION;
CREATE TABLE runs_backfill (result_id TEXT COLLATE "C" PRIMARY KEY);
INSERT INTO runs_backfill (result_id) SELECT id FROM results;
-- The payload's size as it came, for the quota's bytes a day (NULL:
-- stored before, the length of raw then).
ALTER TABLE results ADD COLUMN payload_bytes BIGINT;
-- Samples apart from summaries: per-second samples and histograms are the
-- bulk of a result and are kept for --keep-samples, the summaries for
-- --keep. summary says raw is the result without them (its runs'
-- timelines, probe samples and histograms); the payload as it came is in
-- result_samples until it is pruned. NULL: raw is the payload as it came.
-- result_samples is partitioned by the day the collector received each
-- result (UTC, ns), one table a day created ahead (result_samples_YYYYMMDD);
-- pruning drops a day's table whole rather than deleting its rows.
ALTER TABLE results ADD COLUMN summary BOOLEAN;
CREATE TABLE result_samples (
	result_id TEXT COLLATE "C" NOT NULL,
	received BIGINT NOT NULL,
	raw BYTEA NOT NULL,
	PRIMARY KEY (result_id, received)
) PARTITION BY RANGE (received);
-- The results stored before, whose raw still holds their samples: pruning
-- rewrites each as a summary once it is older than --keep-samples.
CREATE TABLE samples_legacy (
	received BIGINT NOT NULL,
	result_id TEXT COLLATE "C" NOT NULL,
	PRIMARY KEY (received, result_id)
);
INSERT INTO samples_legacy (received, result_id) SELECT received, id FROM results;
-- Indexes for what the pages, the API and compare ask: the newest first,
-- paged by (received, id), overall, of a device, of a fleet, of a
-- command. The device's leads with the device (a filter may name it
-- alone); nothing orders by the device's own start time.
DROP INDEX results_received;
CREATE INDEX results_received ON results (received, id);
DROP INDEX results_device_received;
CREATE INDEX results_device_received ON results (device, received, id);
CREATE INDEX results_fleet_received ON results (fleet, received, id);
DROP INDEX results_command;
CREATE INDEX results_command ON results (command_id, received, id);
DROP INDEX results_started;
-- Retention prunes changes and the alerts raised by when they were found,
-- but the last of each series and metric.
CREATE INDEX changes_detected ON changes (detected_at);
CREATE INDEX changes_series ON changes (series, metric, detected_at);
-- /metrics counts the series with a result received since a time,
-- exported or not.
CREATE INDEX series_received ON series (latest_received);
