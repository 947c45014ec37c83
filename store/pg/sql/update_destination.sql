-- $4 and $9 say whether event_types and max_in_flight were given (NULL is a value there).
-- $11: the caller's tenant (NULL: any). $12 says whether the patch names a tenant_id, $13
-- is the one it names: a tenant_id is never changed, so a patch naming another matches no
-- row (and the caller tells it from an unknown id).
UPDATE destinations
   SET url = coalesce($2, url), description = coalesce($3, description),
       event_types = CASE WHEN $4::boolean THEN $5::text[] ELSE event_types END,
       secret = coalesce($6, secret), headers = coalesce($7::jsonb, headers),
       enabled = coalesce($8::boolean, enabled),
       max_in_flight = CASE WHEN $9::boolean THEN $10::int ELSE max_in_flight END,
       updated_at = now()
 WHERE id = $1 AND deleted_at IS NULL AND ($11::text IS NULL OR tenant_id = $11)
   AND (NOT $12::boolean OR tenant_id IS NOT DISTINCT FROM $13::text)
RETURNING id, url, description, to_json(event_types)::text, secret, headers::text, enabled,
          max_in_flight, created_at, updated_at, tenant_id
