-- The event's tenant's destinations (or, for an event without one, those without one)
-- selected by the type rule of event_type_matches, as keys computed once (the sub-select)
-- and one overlap per destination (migrations/0010_event_type_keys.sql). The tenant test is
-- written as the expression of the destinations_fan_out index (migrations/0006_tenants.sql),
-- so the fan-out reads that tenant's destinations alone, however many others there are.
-- $1 event id, $2 type, $3 tenant (NULL: none), $4 its ordering key (NULL: none).
INSERT INTO deliveries (event_id, destination_id, tenant_id, next_attempt_at, ordering_key)
SELECT $1, t.id, t.tenant_id, now(), $4 FROM destinations t
 WHERE t.enabled AND t.deleted_at IS NULL
   AND coalesce(t.tenant_id, '') = coalesce($3::text, '')
   AND (cardinality(t.event_types) = 0 OR t.event_types && (SELECT event_type_keys($2)))
 ORDER BY t.id
RETURNING id, destination_id, created_at
