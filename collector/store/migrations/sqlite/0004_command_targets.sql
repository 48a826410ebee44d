-- Every device or fleet (_all) a command was sent to: a result may name
-- only a command sent to its device. One command id goes to several
-- targets (a label selection), which commands, keyed by id, keeps only the
-- first of; the commands stored before this migration keep that one.
CREATE TABLE command_targets (
	command_id TEXT NOT NULL,
	fleet TEXT NOT NULL,
	target TEXT NOT NULL,
	PRIMARY KEY (command_id, fleet, target)
) WITHOUT ROWID;
INSERT INTO command_targets (command_id, fleet, target) SELECT id, fleet, target FROM commands;
-- Pages, lists and retention go by the collector's receive time, not by
-- the device's clock.
CREATE INDEX results_received ON results (received);
CREATE INDEX results_device_received ON results (fleet, device, received);
CREATE INDEX events_received ON events (received);
