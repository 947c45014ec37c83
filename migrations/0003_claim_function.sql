-- The claim as one call: take the claim lock, then claim, in one round trip and one
-- implicit transaction. From the client the claim was four round trips (BEGIN, lock,
-- claim, COMMIT): 3.3 ms a claim against 1.4 ms of execution, and the worker's claim
-- loop is serial. Each statement of a VOLATILE function takes a fresh snapshot, so the
-- claim sees every claim committed before the lock was granted and the caps hold
-- across workers. No client-side transaction is ever open, so a worker paused mid-claim
-- cannot hold the lock. A claim need not wait for its fsync: if a crash loses it, the
-- delivery is pending again and is sent again, as after any crash mid-send; an outcome
-- written later is durable only after it anyway.
--
-- Each open destination (enabled, below its cap) offers at most its free room, oldest due
-- first, so one backed-up destination can neither exceed its cap nor crowd out the rest;
-- the batch takes the offers in turns (every destination's oldest, then every second
-- oldest, ...), so backlogs drain side by side instead of one at a time.
CREATE FUNCTION webhookd_claim(batch int, lease_us bigint, token bigint, default_cap int)
  RETURNS TABLE (delivery_id bigint, event_id bigint, event_type text, payload text,
                 event_created_at timestamptz, destination_id bigint, url text, secret text,
                 headers text, attempt_count int, cycle_attempts int, created_at timestamptz)
  LANGUAGE plpgsql VOLATILE
  -- Planning the claim cost as much as running it; its best plan does not depend on the
  -- arguments.
  SET plan_cache_mode = force_generic_plan
  AS $$
#variable_conflict use_column
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  PERFORM pg_advisory_xact_lock(7252011);
  RETURN QUERY
  WITH busy AS (
    SELECT x.destination_id, count(*)::int AS n FROM deliveries x
     WHERE x.status = 'in_flight' GROUP BY x.destination_id),
  open AS (
    SELECT t.id, coalesce(t.max_in_flight, default_cap) - coalesce(b.n, 0) AS room
      FROM destinations t LEFT JOIN busy b ON b.destination_id = t.id
     WHERE t.enabled AND t.deleted_at IS NULL
       AND coalesce(t.max_in_flight, default_cap) > coalesce(b.n, 0)),
  offered AS (
    SELECT c.id, c.next_attempt_at,
           row_number() OVER (PARTITION BY o.id ORDER BY c.next_attempt_at) AS turn
      FROM open o CROSS JOIN LATERAL (
      SELECT d.id, d.next_attempt_at FROM deliveries d
       WHERE d.destination_id = o.id AND d.status = 'pending' AND d.next_attempt_at <= now()
       ORDER BY d.destination_id, d.next_attempt_at LIMIT least(o.room, batch)
       FOR UPDATE OF d SKIP LOCKED) c),
  picked AS (
    SELECT o.id FROM offered o ORDER BY o.turn, o.next_attempt_at LIMIT batch),
  claimed AS (
    UPDATE deliveries d
       SET status = 'in_flight', lease_until = now() + lease_us * interval '1 microsecond',
           claim_token = token, updated_at = now()
      FROM picked p, events e, destinations t
     WHERE d.id = p.id AND e.id = d.event_id AND t.id = d.destination_id
    RETURNING d.id, d.event_id, e.type, e.payload, e.created_at, d.destination_id, t.url,
              t.secret, t.headers::text, d.attempt_count, d.cycle_attempts, d.created_at)
  SELECT * FROM claimed;
END
$$;
