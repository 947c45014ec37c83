-- A live source; $2: the caller's tenant (NULL: any).
SELECT id, tenant_id, provider, description, type_prefix, tolerance_ms, url, hmac_header,
       hmac_algorithm, hmac_encoding, hmac_prefix, event_type, dedupe_header, created_at,
       updated_at, previous_valid_until
  FROM sources
 WHERE id = $1 AND deleted_at IS NULL AND ($2::text IS NULL OR tenant_id = $2)
