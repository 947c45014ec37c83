-- $5: the catalog generation the payload was checked against (0: unchecked). Nothing is
-- inserted once the catalog has changed since: the caller checks again. $6, $7: the trace
-- context (NULL traceparent: the column's default, a fresh trace).
INSERT INTO events (type, payload, tenant_id, ordering_key, traceparent, tracestate)
SELECT $1, $2, $3, $4, coalesce($6, new_traceparent()), $7
 WHERE $5::bigint = 0 OR $5::bigint = (SELECT generation FROM event_catalog)
RETURNING id, created_at
