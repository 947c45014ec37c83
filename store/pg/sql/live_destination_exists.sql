SELECT 1 FROM destinations WHERE id = $1 AND deleted_at IS NULL
