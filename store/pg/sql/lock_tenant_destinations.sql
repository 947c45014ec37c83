-- One creation at a time per tenant ($1; NULL: the no-tenant space), until the creating
-- transaction ends, so two concurrent creations cannot both pass the quota. The key is
-- store/pg/locks.h's kDestinationQuotaLock.
SELECT pg_advisory_xact_lock(7252016, hashtext(coalesce($1::text, '')))
