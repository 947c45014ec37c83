-- $1: kHistoryDropLock (try_history_drop_lock.sql).
SELECT pg_advisory_unlock($1)
