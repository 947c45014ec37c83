-- Takes the key in the event's tenant ($4; none: '') unless a live record holds it; waits
-- for a concurrent writer of the same key to finish, so one key makes one event.
INSERT INTO idempotency_keys (tenant_scope, key, request_hash, event_id)
VALUES (coalesce($4::text, ''), $1, $2, $3)
ON CONFLICT (tenant_scope, key) DO UPDATE SET request_hash = EXCLUDED.request_hash,
   event_id = EXCLUDED.event_id, created_at = now()
 WHERE idempotency_keys.created_at < now() - interval '24 hours'
RETURNING event_id
