SELECT request_hash, event_id FROM idempotency_keys
 WHERE key = $1 AND created_at >= now() - interval '24 hours'
