INSERT INTO api_keys (name, role, key_hash) VALUES ($1, $2, $3)
RETURNING id, name, role, created_at, revoked_at
