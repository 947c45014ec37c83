-- An event a source's verified request made (docs/inbound.md). Nothing is inserted once the
-- sources have changed since the request was verified: the caller verifies again. Bound by
-- name (NamedParams):
-- @param $1 type
-- @param $2 payload
-- @param $3 tenant_id
-- @param $4 source_id
-- @param $5 source_provider
-- @param $6 dedupe_key
-- @param $7 generation the sources' generation it was verified against
-- @param $8 traceparent the request's span, or NULL for a fresh one
INSERT INTO events (type, payload, tenant_id, source_id, source_provider, dedupe_key,
                    traceparent)
SELECT $1, $2, $3, $4, $5, $6, COALESCE($8, new_traceparent())
 WHERE $7::bigint = (SELECT generation FROM source_generation)
RETURNING id, created_at
