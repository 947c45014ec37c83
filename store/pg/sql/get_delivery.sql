-- $2: the caller's tenant (NULL: any).
SELECT id, event_id, destination_id, status, attempt_count, next_attempt_at, last_attempt_at,
       last_status_code, last_error, created_at, updated_at, tenant_id
  FROM deliveries WHERE id = $1 AND ($2::text IS NULL OR tenant_id = $2)
