SELECT id, event_id, destination_id, status, attempt_count, next_attempt_at, last_attempt_at,
       last_status_code, last_error, created_at, updated_at
  FROM deliveries
 WHERE ($1::bigint IS NULL OR id < $1) AND ($2::bigint IS NULL OR destination_id = $2)
   AND ($3::text IS NULL OR status = $3)
 ORDER BY id DESC LIMIT $4
