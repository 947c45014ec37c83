-- A delivery's attempts after number $2, oldest first, at most $3.
SELECT delivery_id, attempt_number, started_at, duration_ms, status_code, error,
       response_body, outcome
  FROM attempts WHERE delivery_id = $1 AND attempt_number > $2
 ORDER BY attempt_number
 LIMIT $3
