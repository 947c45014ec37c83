-- $6: the tenant_id filter, $7: the caller's tenant (each NULL: any).
SELECT id, type, payload, created_at, tenant_id, ordering_key FROM events
 WHERE ($1::bigint IS NULL OR id < $1) AND ($2::text IS NULL OR type = $2)
   AND ($3::timestamptz IS NULL OR created_at >= $3)
   AND ($4::timestamptz IS NULL OR created_at < $4)
   AND ($6::text IS NULL OR tenant_id = $6) AND ($7::text IS NULL OR tenant_id = $7)
 ORDER BY id DESC LIMIT $5
