-- fifo_due_heads returns each head's key and place in the walk, and the claim remembers
-- the last one itself (store/pg/schema/fifo_due_heads.sql says why). A function's result
-- type cannot be replaced, so the old one goes here and the schema definitions create
-- the new one.
DROP FUNCTION IF EXISTS webhookd.fifo_due_heads(bigint, boolean, integer);
