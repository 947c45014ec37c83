-- One statement for a whole batch of attempt outcomes; rows whose claim token no longer
-- matches are left alone and get no attempt row (joined on the token too, so a stale
-- record of a delivery applied in the same batch gets none either).
WITH u AS (
  SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::int[], $4::timestamptz[], $5::int[],
                       $6::int[], $7::text[], $8::text[], $9::text[], $10::text[],
                       $11::bigint[], $12::text[], $13::boolean[])
    AS u(id, token, attempt_number, started_at, duration_ms, status_code, error, body,
         outcome, next_status, wait_us, reason, disable)),
upd AS (
  UPDATE deliveries d
     SET status = u.next_status, attempt_count = u.attempt_number,
         cycle_attempts = d.cycle_attempts + 1,
         next_attempt_at = CASE WHEN u.next_status = 'pending'
                                THEN now() + u.wait_us * interval '1 microsecond' END,
         lease_until = NULL, claim_token = NULL, last_attempt_at = u.started_at,
         last_status_code = u.status_code, last_error = u.error, updated_at = now()
    FROM u
   WHERE d.id = u.id AND d.claim_token = u.token AND d.status = 'in_flight'
  RETURNING d.id, d.event_id, d.destination_id, u.token),
att AS (
  INSERT INTO attempts (delivery_id, attempt_number, started_at, duration_ms, status_code,
                        error, response_body, outcome)
  SELECT u.id, u.attempt_number, u.started_at, u.duration_ms, u.status_code, u.error,
         u.body, u.outcome
    FROM u JOIN upd ON upd.id = u.id AND upd.token = u.token),
dl AS (
  INSERT INTO dead_letters (delivery_id, event_id, destination_id, reason, attempt_count,
                            last_status_code, last_error)
  SELECT u.id, upd.event_id, upd.destination_id, u.reason, u.attempt_number,
         u.status_code, u.error
    FROM u JOIN upd ON upd.id = u.id AND upd.token = u.token
   WHERE u.next_status = 'dead_lettered'),
dis AS (
  UPDATE destinations t SET enabled = false, updated_at = now()
   WHERE t.id IN (SELECT upd.destination_id FROM u JOIN upd
                   ON upd.id = u.id AND upd.token = u.token WHERE u.disable))
SELECT id FROM upd
