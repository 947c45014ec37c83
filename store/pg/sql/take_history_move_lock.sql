-- $1: kHistoryMoveLock. A session lock, held from the carrying of a day of the history to
-- its drop (the detaches between run outside any transaction) until
-- release_history_move_lock.sql; it waits for the erasure batches running (each a short
-- transaction) and keeps new ones out meanwhile.
SELECT pg_advisory_lock($1)
