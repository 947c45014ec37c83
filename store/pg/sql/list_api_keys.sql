SELECT id, name, role, created_at, revoked_at, tenant_id, expires_at FROM api_keys ORDER BY id
