-- The named destination only (the caller has checked it is the event's tenant's). $3: the
-- event's ordering key (NULL: none).
INSERT INTO deliveries (event_id, destination_id, tenant_id, ordering_key)
SELECT $1, t.id, t.tenant_id, $3 FROM destinations t
 WHERE t.id = $2 AND t.enabled AND t.deleted_at IS NULL
RETURNING id, destination_id, created_at
