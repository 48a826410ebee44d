-- A run's errors count every failed request the run's own report counts,
-- failed TLS set-ups and HTTP/2 stream resets included (they were left
-- out). The results stored before are listed here; opening the store
-- recounts their runs' errors from their payloads and empties the list.
CREATE TABLE errors_recount (result_id TEXT PRIMARY KEY);
INSERT INTO errors_recount (result_id) SELECT id FROM results;
