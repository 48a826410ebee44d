-- The time of the heartbeat stored (its own, in ns): several collectors
-- write a device's heartbeats, and an older one must not replace a newer.
ALTER TABLE devices ADD COLUMN heartbeat_at INTEGER NOT NULL DEFAULT 0;
-- Retention (serve --keep) deletes commands and events by age.
CREATE INDEX commands_issued ON commands (issued_at);
CREATE INDEX events_at ON events (at);
