-- The destinations selected by event_type_matches (migrations/0004_schema_webhookd.sql).
INSERT INTO deliveries (event_id, destination_id, next_attempt_at)
SELECT $1, t.id, now() FROM destinations t
 WHERE t.enabled AND t.deleted_at IS NULL
   AND event_type_matches(t.event_types, $2)
 ORDER BY t.id
RETURNING id, destination_id, created_at
