-- A new source (docs/inbound.md), its secret sealed by the caller. Bound by name
-- (NamedParams):
-- @param $1 tenant_id
-- @param $2 provider
-- @param $3 description
-- @param $4 type_prefix
-- @param $5 tolerance_ms
-- @param $6 url
-- @param $7 hmac_header
-- @param $8 hmac_algorithm
-- @param $9 hmac_encoding
-- @param $10 hmac_prefix
-- @param $11 event_type
-- @param $12 dedupe_header
-- @param $13 secret
INSERT INTO sources (tenant_id, provider, description, type_prefix, tolerance_ms, url,
                     hmac_header, hmac_algorithm, hmac_encoding, hmac_prefix, event_type,
                     dedupe_header, secret)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
RETURNING id, tenant_id, provider, description, type_prefix, tolerance_ms, url, hmac_header,
       hmac_algorithm, hmac_encoding, hmac_prefix, event_type, dedupe_header, created_at,
       updated_at, previous_valid_until
