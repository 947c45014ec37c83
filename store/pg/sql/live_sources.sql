-- Every live source with its secrets (sealed as stored), for the ingest cache; a secret
-- past its grace is left out.
SELECT id, tenant_id, provider, description, type_prefix, tolerance_ms, url, hmac_header,
       hmac_algorithm, hmac_encoding, hmac_prefix, event_type, dedupe_header, created_at,
       updated_at, previous_valid_until,
       secret, CASE WHEN previous_valid_until > now() THEN previous_secret END
  FROM sources
 WHERE deleted_at IS NULL
