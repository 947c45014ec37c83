-- $1: kHistoryMoveLock (take_history_move_lock.sql).
SELECT pg_advisory_unlock($1)
