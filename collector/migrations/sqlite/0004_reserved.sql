-- This number belongs to another change of the schema, merged apart;
-- the file only keeps the numbers without a gap until then.
SELECT 1;
