-- The event's deliveries, to the destinations of webhookd.fan_out (store/pg/schema/fan_out.sql,
-- the rule: tenant, type, filter). The type's keys are computed once (the fenced sub-select:
-- pulled up, the expression would be evaluated at each of its uses in the rule).
-- A destination's tenant is the event's: the rule compares them.
-- $1 event id, $2 type, $3 tenant (NULL: none), $4 its ordering key (NULL: none),
-- $5 the payload.
INSERT INTO deliveries (event_id, destination_id, tenant_id, ordering_key)
SELECT $1, d.id, $3, $4
  FROM (SELECT event_type_keys($2::text) AS keys OFFSET 0) k,
       webhookd.fan_out($3::text, k.keys, $5::text) d(id)
 ORDER BY d.id
RETURNING id, destination_id, created_at
