-- For the worker's statements, on top of generic_plans.sql. Each reaches the rows it
-- touches by key, from a batch of ids, and keeps one plan per connection, made at its
-- first use and kept until an ANALYZE. Made on a new, small database, a hash join
-- against a whole-table scan is the cheapest plan, and it was kept as the table grew to
-- 50,000 rows and more; made when few deliveries were in flight, a hash join against all
-- of them was kept when 1,024 were. Without scans of whole tables and hash or merge joins,
-- every plan they have is a key lookup per row, whatever the table held when it was
-- made. The claim function sets its own (store/pg/schema/claim_due.sql).
SET enable_seqscan = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off
