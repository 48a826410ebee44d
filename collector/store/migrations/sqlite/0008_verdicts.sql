-- A run's verdict as the device judged it (limited_by, valid) and a
-- result's --repeat auto outcome (stable, the RSD of the figure it
-- judged, its runs, and that figure when not req/s: p99 in open loop), so that compare and the lists read them without decoding each
-- payload. NULL for what was recorded without them. The results stored
-- before are listed here; opening the store fills their columns from
-- their payloads and empties the list.
ALTER TABLE runs ADD COLUMN limited_by TEXT;
ALTER TABLE runs ADD COLUMN valid INTEGER;
ALTER TABLE results ADD COLUMN stable INTEGER;
ALTER TABLE results ADD COLUMN stable_rsd_pct REAL;
ALTER TABLE results ADD COLUMN stable_runs INTEGER;
ALTER TABLE results ADD COLUMN stable_on TEXT;
CREATE TABLE verdicts_backfill (result_id TEXT PRIMARY KEY) WITHOUT ROWID;
INSERT INTO verdicts_backfill (result_id) SELECT id FROM results;
