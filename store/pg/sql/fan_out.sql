-- The event's tenant's destinations (or, for an event without one, those without one)
-- selected by the type rule of event_type_matches, as keys computed once (the sub-select)
-- and one overlap per destination (store/pg/schema/event_type_keys.sql). The tenant test is
-- written as the expression of the destinations_fan_out index (migrations/0034_baseline.sql),
-- so the fan-out reads that tenant's destinations alone, however many others there are.
-- A filtered destination gets it only if its filter is true for the payload, made jsonb
-- once and only when some candidate has a filter (see insert_event_group.sql).
-- $1 event id, $2 type, $3 tenant (NULL: none), $4 its ordering key (NULL: none),
-- $5 the payload.
WITH k AS (SELECT event_type_keys($2) AS keys),
j AS (
  SELECT CASE WHEN EXISTS (
           SELECT 1 FROM destinations f, k
            WHERE f.filter IS NOT NULL AND f.enabled AND f.deleted_at IS NULL
              AND coalesce(f.tenant_id, '') = coalesce($3::text, '')
              AND (cardinality(f.event_types) = 0 OR f.event_types && k.keys))
         THEN payload_jsonb($5) END AS doc)
INSERT INTO deliveries (event_id, destination_id, tenant_id, next_attempt_at, ordering_key)
SELECT $1, t.id, t.tenant_id, now(), $4 FROM destinations t, k, j
 WHERE t.enabled AND t.deleted_at IS NULL
   AND coalesce(t.tenant_id, '') = coalesce($3::text, '')
   AND (cardinality(t.event_types) = 0 OR t.event_types && k.keys)
   AND (t.filter_path IS NULL OR jsonb_path_match(j.doc, t.filter_path, '{}', true))
 ORDER BY t.id
RETURNING id, destination_id, created_at
