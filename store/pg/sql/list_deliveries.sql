-- $5: the tenant_id filter, $6: the caller's tenant (each NULL: any).
SELECT id, event_id, destination_id, status, attempt_count, next_attempt_at, last_attempt_at,
       last_status_code, last_error, created_at, updated_at, tenant_id,
       ordering_key,
       -- only a waiting fifo delivery has anything to wait for: no call for the others
       CASE WHEN fifo AND status = 'pending'
            THEN fifo_blocked_by(id, destination_id, fifo, ordering_key, status) END
  FROM deliveries
 WHERE ($1::bigint IS NULL OR id < $1) AND ($2::bigint IS NULL OR destination_id = $2)
   AND ($3::text IS NULL OR status = $3)
   AND ($5::text IS NULL OR tenant_id = $5) AND ($6::text IS NULL OR tenant_id = $6)
 ORDER BY id DESC LIMIT $4
