-- $2: the caller's tenant (NULL: any).
SELECT * FROM delivery_rows WHERE id = $1 AND ($2::text IS NULL OR tenant_id = $2)
