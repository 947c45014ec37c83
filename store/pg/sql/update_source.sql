-- A patched source's settings (the tenant and the secrets stay). Bound by name:
-- @param $1 id
-- @param $2 description
-- @param $3 type_prefix
-- @param $4 tolerance_ms
-- @param $5 url
-- @param $6 hmac_header
-- @param $7 hmac_algorithm
-- @param $8 hmac_encoding
-- @param $9 hmac_prefix
-- @param $10 event_type
-- @param $11 dedupe_header
UPDATE sources
   SET description = $2, type_prefix = $3, tolerance_ms = $4, url = $5, hmac_header = $6,
       hmac_algorithm = $7, hmac_encoding = $8, hmac_prefix = $9, event_type = $10,
       dedupe_header = $11, updated_at = now()
 WHERE id = $1
RETURNING id, tenant_id, provider, description, type_prefix, tolerance_ms, url, hmac_header,
       hmac_algorithm, hmac_encoding, hmac_prefix, event_type, dedupe_header, created_at,
       updated_at, previous_valid_until
