-- The outcome statement for a batch of successes whose destinations had nothing to
-- recover from when they were claimed (the claim's `clean`): no protection state can
-- change and no operational event can follow, so this is record_outcomes.sql without
-- that half, as cheap as it was before receiver protection. A destination that turned
-- unclean since the claim keeps its counts until its next outcome through the full
-- statement (at most a claim's lease later).
-- Returns the applied delivery ids. The parameters, bound by name (NamedParams), each one
-- element per record:
-- @param $1 ids
-- @param $2 claim_tokens
-- @param $3 attempt_numbers
-- @param $4 started_at
-- @param $5 durations_ms
-- @param $6 status_codes
-- @param $7 response_bodies
-- A queue row is found by its id and claim token alone: a token is set exactly while it
-- is in flight (migrations/0035_delivery_queue.sql), so the one plan is a key lookup per
-- record (sql/scripts/key_plans.sql). A success deletes the queue row, finishes the
-- history row with an update that changes no indexed column (a HOT update) and appends
-- the attempt; each step reads what the one before returned, so no second join of the
-- batch is needed.
WITH u AS (
  SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::int[], $4::timestamptz[], $5::int[],
                       $6::int[], $7::text[])
    AS u(id, token, attempt_number, started_at, duration_ms, status_code, body)),
done AS (
  DELETE FROM delivery_queue q USING u
   WHERE q.id = u.id AND q.claim_token = u.token
  RETURNING q.id, u.attempt_number, u.started_at, u.duration_ms, u.status_code, u.body),
upd AS (
  UPDATE deliveries d
     SET status = 'succeeded', attempt_count = x.attempt_number,
         cycle_attempts = d.cycle_attempts + 1, last_attempt_at = x.started_at,
         last_status_code = x.status_code, last_error = NULL, updated_at = now()
    FROM done x
   WHERE d.id = x.id
  RETURNING d.id, d.kept, d.destination_id, x.attempt_number, x.started_at, x.duration_ms,
            x.status_code, x.body),
att AS (
  INSERT INTO attempts (delivery_id, attempt_number, started_at, duration_ms, status_code,
                        error, response_body, outcome, kept)
  SELECT id, attempt_number, started_at, duration_ms, status_code, NULL, body, 'success', kept
    FROM upd),
-- The destinations' rollups by minute and by hour, as record_outcomes.sql adds to them.
rolled AS (
  INSERT INTO destination_stats AS s (destination_id, minute, slot, succeeded, latency)
  SELECT a.destination_id, a.minute, pg_backend_pid() % 4, count(*),
         webhookd.latency_histogram(array_agg(a.duration_ms))
    FROM (SELECT x.destination_id, x.duration_ms,
                 date_bin('1 minute', x.started_at, timestamptz 'epoch') AS minute
            FROM upd x) a
    JOIN history_days h ON h.day = (a.minute AT TIME ZONE 'UTC')::date
                       AND h.detaching_since IS NULL
   GROUP BY a.destination_id, a.minute
   ORDER BY a.destination_id, a.minute
  ON CONFLICT (destination_id, minute, slot) DO UPDATE
     SET succeeded = s.succeeded + excluded.succeeded,
         latency = webhookd.add_latency(s.latency, excluded.latency)),
rolled_hours AS (
  INSERT INTO destination_stats_hours AS s (destination_id, hour, slot, succeeded, latency)
  SELECT a.destination_id, a.hour, pg_backend_pid() % 4, count(*),
         webhookd.latency_histogram(array_agg(a.duration_ms))
    FROM (SELECT x.destination_id, x.duration_ms,
                 date_bin('1 hour', x.started_at, timestamptz 'epoch') AS hour
            FROM upd x) a
    JOIN history_days h ON h.day = (a.hour AT TIME ZONE 'UTC')::date
                       AND h.detaching_since IS NULL
   GROUP BY a.destination_id, a.hour
   ORDER BY a.destination_id, a.hour
  ON CONFLICT (destination_id, hour, slot) DO UPDATE
     SET succeeded = s.succeeded + excluded.succeeded,
         latency = webhookd.add_latency(s.latency, excluded.latency))
SELECT id FROM upd
