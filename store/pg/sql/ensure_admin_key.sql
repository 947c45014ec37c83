INSERT INTO api_keys (name, role, key_hash) VALUES ('bootstrap', 'admin', $1)
ON CONFLICT (key_hash) DO UPDATE
   SET role = 'admin', tenant_id = NULL, expires_at = NULL, revoked_at = NULL
