-- $2: the caller's tenant (NULL: any); another tenant's destination is not found.
SELECT id, url, description, to_json(event_types)::text, secret, headers::text, enabled,
       max_in_flight, created_at, updated_at, tenant_id
  FROM destinations
 WHERE id = $1 AND deleted_at IS NULL AND ($2::text IS NULL OR tenant_id = $2)
