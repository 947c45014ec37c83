SELECT id, type, payload, created_at FROM events WHERE id = $1
