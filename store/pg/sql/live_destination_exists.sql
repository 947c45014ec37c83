-- A live destination, and whether it belongs to the tenant $2 (NULL: to no tenant).
SELECT tenant_id IS NOT DISTINCT FROM $2::text FROM destinations
 WHERE id = $1 AND deleted_at IS NULL
