SELECT id, event_id, destination_id, status, attempt_count, next_attempt_at, last_attempt_at,
       last_status_code, last_error, created_at, updated_at, tenant_id
  FROM deliveries WHERE event_id = $1 ORDER BY id
