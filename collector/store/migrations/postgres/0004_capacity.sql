-- A capacity search's answer (kind capacity), on its final trial's run:
-- compare compares it across devices and labels as the other figures.
ALTER TABLE runs ADD COLUMN capacity_rps DOUBLE PRECISION;
