-- $5: the tenant_id filter, $6: the caller's tenant (each NULL: any).
SELECT * FROM delivery_rows
 WHERE ($1::bigint IS NULL OR id < $1) AND ($2::bigint IS NULL OR destination_id = $2)
   AND ($3::text IS NULL OR status = $3)
   AND ($5::text IS NULL OR tenant_id = $5) AND ($6::text IS NULL OR tenant_id = $6)
 ORDER BY id DESC LIMIT $4
