UPDATE destinations SET deleted_at = now(), enabled = false, updated_at = now()
 WHERE id = $1 AND deleted_at IS NULL RETURNING id
