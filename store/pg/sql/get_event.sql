-- $2: the caller's tenant (NULL: any).
SELECT id, type, payload, created_at, tenant_id, ordering_key, array_to_json(subjects)::text,
       erased_at, source_id, source_provider, dedupe_key
  FROM events
 WHERE id = $1 AND ($2::text IS NULL OR tenant_id = $2)
