-- An expired key is refused exactly like a revoked one.
SELECT id, name, role, created_at, revoked_at, tenant_id, expires_at FROM api_keys
 WHERE key_hash = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())
