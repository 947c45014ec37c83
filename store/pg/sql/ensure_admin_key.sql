-- The bootstrap admin key: created, or made an admin key again if a key with that value
-- exists (a publisher, a tenant key, an expired one). A revoked one stays revoked: the
-- update is skipped and no row comes back, so start-up can refuse it.
INSERT INTO api_keys (name, role, key_hash) VALUES ('bootstrap', 'admin', $1)
ON CONFLICT (key_hash) DO UPDATE
   SET role = 'admin', tenant_id = NULL, expires_at = NULL
 WHERE api_keys.revoked_at IS NULL
RETURNING id
