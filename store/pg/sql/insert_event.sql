-- Nothing is inserted once the catalog has changed since the payload was checked: the
-- caller checks again. The parameters, bound by name (NamedParams):
-- @param $1 type
-- @param $2 payload
-- @param $3 tenant_id
-- @param $4 ordering_key
-- @param $5 catalog_generation the one the payload was checked against (0: unchecked)
-- @param $6 traceparent (NULL: a fresh trace)
-- @param $7 tracestate
-- @param $8 subjects (NULL: none; each once, as the API parsed them)
INSERT INTO events (type, payload, tenant_id, ordering_key, traceparent, tracestate, subjects)
SELECT $1, $2, $3, $4, coalesce($6, new_traceparent()), $7, $8::text[]
 WHERE $5::bigint = 0 OR $5::bigint = (SELECT generation FROM event_catalog)
RETURNING id, created_at
