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
  RETURNING d.id, d.kept, x.attempt_number, x.started_at, x.duration_ms, x.status_code,
            x.body),
att AS (
  INSERT INTO attempts (delivery_id, attempt_number, started_at, duration_ms, status_code,
                        error, response_body, outcome, kept)
  SELECT id, attempt_number, started_at, duration_ms, status_code, NULL, body, 'success', kept
    FROM upd)
SELECT id FROM upd
