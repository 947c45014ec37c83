-- $1: kHistoryDropLock. A session lock, held across the detaches of a day (which run
-- outside any transaction) until release_history_drop_lock.sql; another process dropping
-- means skip.
SELECT pg_try_advisory_lock($1)
