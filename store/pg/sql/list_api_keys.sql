SELECT id, name, role, created_at, revoked_at FROM api_keys ORDER BY id
