SELECT id, event_id, destination_id, status, attempt_count, next_attempt_at, last_attempt_at,
       last_status_code, last_error, created_at, updated_at, tenant_id,
       ordering_key,
       -- only a waiting fifo delivery has anything to wait for: no call for the others
       CASE WHEN fifo AND status = 'pending'
            THEN fifo_blocked_by(id, destination_id, fifo, ordering_key, status) END
  FROM deliveries WHERE event_id = $1 ORDER BY id
