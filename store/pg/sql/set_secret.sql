UPDATE destinations SET secret = $2, updated_at = now() WHERE id = $1 RETURNING now()
