-- $1: kHistoryMoveLock. Whether an erasure batch may run now: the lock, tried, shared, for
-- the batch's transaction (false while a retention step holds it or waits for it: a waiting
-- exclusive request refuses every later shared one, so erasures never starve the drop of a
-- day), and no day of the history left half-dropped by a round that died between its
-- detach and its drop, whose kept rows the next round copies back from the detached tables
-- (store/pg/schema/drop_detached_history_day.sql).
SELECT pg_try_advisory_xact_lock_shared($1)
       AND NOT EXISTS (SELECT 1 FROM history_days WHERE detaching_since IS NOT NULL)
