-- The current secret of a live destination, locked for the rotation's transaction.
-- $2: the caller's tenant (NULL: any).
SELECT secret FROM destinations
 WHERE id = $1 AND deleted_at IS NULL AND ($2::text IS NULL OR tenant_id = $2) FOR UPDATE
