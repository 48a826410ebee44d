-- What each result asked of the server (collector.Spec as JSON):
-- compare keeps runs of different specs apart.
CREATE TABLE result_specs (
	result_id TEXT PRIMARY KEY REFERENCES results (id),
	spec TEXT NOT NULL
) WITHOUT ROWID;
