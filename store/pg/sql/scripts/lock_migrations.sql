-- $1: kMigrateLock. Held by the session until its connection ends.
SELECT pg_advisory_lock($1)
