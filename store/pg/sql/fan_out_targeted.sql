-- The named destination only (the caller has checked it is the event's tenant's).
INSERT INTO deliveries (event_id, destination_id, tenant_id, next_attempt_at)
SELECT $1, t.id, t.tenant_id, now() FROM destinations t
 WHERE t.id = $2 AND t.enabled AND t.deleted_at IS NULL
RETURNING id, destination_id, created_at
