-- The parameters, bound by name (NamedParams); each filter NULL: any.
-- @param $1 before_id
-- @param $2 type
-- @param $3 after
-- @param $4 before
-- @param $5 limit
-- @param $6 tenant_id the tenant_id filter
-- @param $7 scope_tenant_id the caller's tenant
-- @param $8 source_id the source filter
SELECT id, type, payload, created_at, tenant_id, ordering_key, array_to_json(subjects)::text,
       erased_at, source_id, source_provider, dedupe_key
  FROM events
 WHERE ($1::bigint IS NULL OR id < $1) AND ($2::text IS NULL OR type = $2)
   AND ($3::timestamptz IS NULL OR created_at >= $3)
   AND ($4::timestamptz IS NULL OR created_at < $4)
   -- The same bounds as ids, which name the days' partitions (schema/first_event_id_at.sql).
   AND id >= webhookd.first_event_id_at($3) AND id <= webhookd.event_id_bound_before($4)
   AND ($6::text IS NULL OR tenant_id = $6) AND ($7::text IS NULL OR tenant_id = $7)
   AND ($8::bigint IS NULL OR source_id = $8)
 ORDER BY id DESC LIMIT $5
