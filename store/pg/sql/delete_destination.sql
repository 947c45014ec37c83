-- $2: the caller's tenant (NULL: any).
UPDATE destinations SET deleted_at = now(), enabled = false, updated_at = now()
 WHERE id = $1 AND deleted_at IS NULL AND ($2::text IS NULL OR tenant_id = $2) RETURNING id
