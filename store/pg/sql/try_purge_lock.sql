-- $1: kPurgeLock. Held until the transaction ends; another process purging means skip.
SELECT pg_try_advisory_xact_lock($1)
