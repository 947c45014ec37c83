-- Takes the key unless a live record holds it; waits for a concurrent writer of the
-- same key to finish, so one key makes one event.
INSERT INTO idempotency_keys (key, request_hash, event_id) VALUES ($1, $2, $3)
ON CONFLICT (key) DO UPDATE SET request_hash = EXCLUDED.request_hash,
   event_id = EXCLUDED.event_id, created_at = now()
 WHERE idempotency_keys.created_at < now() - interval '24 hours'
RETURNING event_id
