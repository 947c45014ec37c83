-- Keys are remembered for 24 hours (take_idempotency_key.sql reuses older ones anyway).
DELETE FROM idempotency_keys WHERE created_at < now() - interval '24 hours'
