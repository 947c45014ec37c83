SELECT delivery_id, attempt_number, started_at, duration_ms, status_code, error,
       response_body, outcome
  FROM attempts WHERE delivery_id = $1 ORDER BY attempt_number
