-- $5: the key's lifetime in microseconds (NULL: it never expires).
INSERT INTO api_keys (name, role, key_hash, tenant_id, expires_at)
VALUES ($1, $2, $3, $4, now() + $5::bigint * interval '1 microsecond')
RETURNING id, name, role, created_at, revoked_at, tenant_id, expires_at
