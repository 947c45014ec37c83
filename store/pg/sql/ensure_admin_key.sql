-- The bootstrap admin key: created, or made an admin key again if a live key with that
-- value exists (a publisher, a tenant key), its expiry kept. A revoked or expired one
-- stays so: the update is skipped, and the row says which, so start-up can refuse it.
-- One row: 'live', 'revoked' or 'expired'.
WITH ensured AS (
  INSERT INTO api_keys (name, role, key_hash) VALUES ('bootstrap', 'admin', $1)
  ON CONFLICT (key_hash) DO UPDATE
     SET role = 'admin', tenant_id = NULL
   WHERE api_keys.revoked_at IS NULL
     AND (api_keys.expires_at IS NULL OR api_keys.expires_at > now())
  RETURNING id)
SELECT 'live' FROM ensured
UNION ALL
SELECT CASE WHEN revoked_at IS NOT NULL THEN 'revoked' ELSE 'expired' END
  FROM api_keys
 WHERE key_hash = $1 AND NOT EXISTS (SELECT FROM ensured)
