INSERT INTO events (type, payload, tenant_id, ordering_key) VALUES ($1, $2, $3, $4)
RETURNING id, created_at
