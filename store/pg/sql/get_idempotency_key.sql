-- The live record of a key in the event's tenant ($2; none: '').
SELECT request_hash, event_id FROM idempotency_keys
 WHERE tenant_scope = coalesce($2::text, '') AND key = $1
   AND created_at >= now() - interval '24 hours'
