-- The parameters, bound by name (NamedParams); each filter NULL: any.
-- @param $1 destination_id
-- @param $2 reason
-- @param $3 since
-- @param $4 until
-- @param $5 before_id
-- @param $6 limit
-- @param $7 tenant_id the tenant_id filter
-- @param $8 scope_tenant_id the caller's tenant
SELECT id, delivery_id, event_id, destination_id, reason, attempt_count, last_status_code,
       last_error, dead_lettered_at, replayed_at, tenant_id, dismissed_at
  FROM dead_letters
 WHERE ($1::bigint IS NULL OR destination_id = $1) AND ($2::text IS NULL OR reason = $2)
   AND ($3::timestamptz IS NULL OR dead_lettered_at >= $3)
   AND ($4::timestamptz IS NULL OR dead_lettered_at < $4)
   AND ($5::bigint IS NULL OR id < $5)
   AND ($7::text IS NULL OR tenant_id = $7) AND ($8::text IS NULL OR tenant_id = $8)
 ORDER BY id DESC LIMIT $6
