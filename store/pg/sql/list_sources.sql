-- Live sources, newest first. Bound by name (NamedParams); each filter NULL: any.
-- @param $1 before_id
-- @param $2 tenant_id the tenant_id filter
-- @param $3 scope_tenant_id the caller's tenant
-- @param $4 limit
SELECT id, tenant_id, provider, description, type_prefix, tolerance_ms, url, hmac_header,
       hmac_algorithm, hmac_encoding, hmac_prefix, event_type, dedupe_header, created_at,
       updated_at, previous_valid_until
  FROM sources
 WHERE deleted_at IS NULL AND ($1::bigint IS NULL OR id < $1)
   AND ($2::text IS NULL OR tenant_id = $2) AND ($3::text IS NULL OR tenant_id = $3)
 ORDER BY id DESC LIMIT $4
