INSERT INTO events (type, payload) VALUES ($1, $2) RETURNING id, created_at
