-- The events naming a subject, newest first, through event_subjects: by its primary key
-- within one tenant (a tenant's key, or the tenant_id filter; '' never matches a tenant,
-- as no tenant id is empty), else by event_subjects_any. A page reads the subject's
-- entries, however many events other subjects have. Each filter NULL: any.
-- @param $1 subject
-- @param $2 before_id
-- @param $3 type
-- @param $4 after
-- @param $5 before
-- @param $6 limit
-- @param $7 tenant_id the tenant_id filter
-- @param $8 scope_tenant_id the caller's tenant
-- @param $9 source_id the source filter
SELECT v.id, v.type, v.payload, v.created_at, v.tenant_id, v.ordering_key,
       array_to_json(v.subjects)::text, v.erased_at,
       v.source_id, v.source_provider, v.dedupe_key
  FROM event_subjects s JOIN events v ON v.id = s.event_id
 WHERE s.subject_hash = sha256(convert_to($1, 'UTF8'))
   AND ($2::bigint IS NULL OR s.event_id < $2)
   AND ($7::text IS NULL OR s.tenant_scope = $7) AND ($8::text IS NULL OR s.tenant_scope = $8)
   AND ($3::text IS NULL OR v.type = $3) AND ($9::bigint IS NULL OR v.source_id = $9)
   AND ($4::timestamptz IS NULL OR v.created_at >= $4)
   AND ($5::timestamptz IS NULL OR v.created_at < $5)
 ORDER BY s.event_id DESC LIMIT $6
