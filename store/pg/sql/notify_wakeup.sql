-- $1: the wake-up channel (kWakeupChannel). NOTIFY is delivered at commit, so workers wake
-- only for what committed.
SELECT pg_notify($1, '')
