-- The queue's indexes keep one entry per row. PostgreSQL merges entries with equal keys
-- into posting lists, and an index scan can mark a posting list dead only once every row
-- it names is dead. A backlog stamped by one statement (an ingest group, a replay, a
-- backfill) has one due time per destination, so each destination's pending entries were
-- a few posting lists, and every claim fetched again each row the earlier claims had
-- taken, each from a heap page of its own, until a VACUUM: with 100,000 deliveries over
-- 200 slow receivers, a destination's probe went from 3 µs to 80 µs as they drained.
-- With one entry per row, the first scan past a taken row marks its entry, and later
-- ones step over it. The same holds for the leases of one claim, which share their
-- expiry, and for the hints, which share their due time.
--
-- Entries already merged stay so until VACUUM removes their dead rows; a REINDEX would
-- take every entry apart at once, but it blocks writes for as long as it runs.
ALTER INDEX webhookd.deliveries_pending_by_destination SET (deduplicate_items = off);
ALTER INDEX webhookd.deliveries_in_flight SET (deduplicate_items = off);
ALTER INDEX webhookd.due_destinations_due SET (deduplicate_items = off);
ALTER INDEX webhookd.due_destinations_destination SET (deduplicate_items = off);
