-- The results stored before their specs were kept apart (result_specs),
-- listed once: opening the store gives each its spec from its payload
-- and takes it off the list (backfillSpecs), so that an open reads this
-- list, not every result stored (at 1,000,000 results that search cost
-- every command 3 s).
CREATE TABLE specs_backfill (result_id TEXT COLLATE "C" PRIMARY KEY);
INSERT INTO specs_backfill (result_id)
	SELECT r.id FROM results r WHERE NOT EXISTS (SELECT 1 FROM result_specs sp WHERE sp.result_id = r.id);
