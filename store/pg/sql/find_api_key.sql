SELECT id, name, role, created_at, revoked_at, key_hash FROM api_keys
 WHERE key_hash = $1 AND revoked_at IS NULL
