INSERT INTO events (type, payload, tenant_id) VALUES ($1, $2, $3) RETURNING id, created_at
