-- The claim's cost follows the destinations with pending work, not every destination:
-- 0011's claim computed every live destination's in-flight count, guard and room and
-- probed each one's due rows, so a database with 100,000 idle destinations made every
-- claim read them all. Now the claim first finds the destinations that have a pending
-- delivery by skipping through deliveries_pending_by_destination (one index probe per such
-- destination), and applies every rule of 0011 (caps in force, circuit modes, probes,
-- token buckets, round robin, the lock, the lease and the token) to those alone. The body
-- is 0011's but for the pending_dst step and the guard reading from it.
CREATE OR REPLACE FUNCTION webhookd.claim_due(batch int, lease_us bigint, token bigint, default_cap int)
  RETURNS TABLE (delivery_id bigint, event_id bigint, event_type text, payload text,
                 event_created_at timestamptz, destination_id bigint, url text, secret text,
                 headers text, attempt_count int, cycle_attempts int, created_at timestamptz,
                 kind text, clean boolean)
  LANGUAGE plpgsql VOLATILE
  -- Planning the claim cost as much as running it; its best plan does not depend on the
  -- arguments.
  SET plan_cache_mode = force_generic_plan
  SET search_path = webhookd
  AS $$
#variable_conflict use_column
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  PERFORM pg_advisory_xact_lock(7252011);
  RETURN QUERY
  WITH RECURSIVE busy AS (
    SELECT x.destination_id, count(*)::int AS n FROM deliveries x
     WHERE x.status = 'in_flight' GROUP BY x.destination_id),
  -- Protection: per live destination, what its circuit lets through (mode NULL: nothing,
  -- the probe or attempts sent before the circuit opened are still out), its cap in force
  -- and the tokens its bucket holds now (NULL: no rate limit).
  -- The destinations with a pending delivery, one index probe each: a skip through
  -- deliveries_pending_by_destination from one destination_id to the next. Destinations
  -- with nothing pending are never read, so idle destinations cost the claim nothing.
  pending_dst(id) AS (
    (SELECT d.destination_id FROM deliveries d WHERE d.status = 'pending'
      ORDER BY d.destination_id LIMIT 1)
    UNION ALL
    SELECT (SELECT d.destination_id FROM deliveries d
             WHERE d.status = 'pending' AND d.destination_id > p.id
             ORDER BY d.destination_id LIMIT 1)
      FROM pending_dst p WHERE p.id IS NOT NULL),
  guard AS (
    SELECT t.id, coalesce(b.n, 0) AS busy,
           least(coalesce(t.effective_max_in_flight, t.max_in_flight, default_cap),
                 coalesce(t.max_in_flight, default_cap)) AS cap,
           CASE WHEN t.circuit = 'closed' THEN 'send'
                WHEN t.circuit = 'open' AND t.next_probe_at > now() THEN 'skip'
                WHEN coalesce(b.n, 0) = 0 THEN 'probe' END AS mode,
           CASE WHEN t.rate_limit IS NULL THEN NULL
                WHEN t.tokens_at IS NULL THEN t.rate_limit::float8
                ELSE least(t.rate_limit::float8,
                           t.tokens + t.rate_limit * extract(epoch FROM now() - t.tokens_at)::float8)
           END AS tokens
      FROM pending_dst u JOIN destinations t ON t.id = u.id
      LEFT JOIN busy b ON b.destination_id = t.id
     WHERE t.enabled AND t.deleted_at IS NULL),
  -- Each destination's room: a closed one's free cap, a probe's one, an open one's whole
  -- batch (skips send nothing); `allowed` is what its bucket lets start.
  open AS (
    SELECT g.id, g.mode,
           CASE g.mode WHEN 'send' THEN g.cap - g.busy WHEN 'probe' THEN 1 ELSE batch END AS room,
           CASE WHEN g.mode = 'skip' OR g.tokens IS NULL THEN batch
                ELSE floor(g.tokens)::int END AS allowed
      FROM guard g
     WHERE g.mode IN ('skip', 'probe') OR (g.mode = 'send' AND g.cap > g.busy)),
  -- One row more than the bucket allows is looked at (and left alone): it tells that the
  -- rate limit held the destination back.
  offered AS (
    SELECT c.id, c.next_attempt_at, o.id AS dst, o.mode, o.allowed,
           row_number() OVER (PARTITION BY o.id ORDER BY c.next_attempt_at) AS turn
      FROM open o CROSS JOIN LATERAL (
      SELECT d.id, d.next_attempt_at FROM deliveries d
       WHERE d.destination_id = o.id AND d.status = 'pending' AND d.next_attempt_at <= now()
       ORDER BY d.destination_id, d.next_attempt_at LIMIT least(o.room, batch, o.allowed + 1)
       FOR UPDATE OF d SKIP LOCKED) c),
  picked AS (
    SELECT o.id, o.dst, o.mode FROM offered o WHERE o.turn <= o.allowed
     ORDER BY o.turn, o.next_attempt_at LIMIT batch),
  claimed AS (
    UPDATE deliveries d
       SET status = 'in_flight', lease_until = now() + lease_us * interval '1 microsecond',
           claim_token = token, updated_at = now()
      FROM picked p, events e, destinations t
     WHERE d.id = p.id AND e.id = d.event_id AND t.id = d.destination_id
    RETURNING d.id, d.event_id, e.type, e.payload, e.created_at, d.destination_id, t.url,
              -- Every secret that signs: the current one, then those still in their
              -- grace period, newest first, space-separated (a secret has no spaces).
              concat_ws(' ', VARIADIC t.secret || ARRAY(
                SELECT s.secret FROM destination_secrets s
                 WHERE s.destination_id = t.id AND s.expires_at > now()
                 ORDER BY s.retired_at DESC)),
              t.headers::text, d.attempt_count, d.cycle_attempts, d.created_at, p.mode,
              -- Nothing to recover from: a success of this delivery changes no protection
              -- state, so the worker may record it with the plain statement.
              t.circuit = 'closed' AND t.consecutive_failures = 0 AND t.failing_since IS NULL
                AND t.effective_max_in_flight IS NULL),
  -- Protection: a probe makes its circuit half-open; sends and probes spend tokens. Rows
  -- are locked in id order, as the outcome statement locks them, so the two never
  -- deadlock.
  spent AS (
    SELECT p.dst, count(*) FILTER (WHERE p.mode <> 'skip')::int AS n,
           bool_or(p.mode = 'probe') AS probe
      FROM picked p GROUP BY p.dst),
  locked AS MATERIALIZED (
    SELECT t.id FROM destinations t JOIN spent s ON s.dst = t.id
     JOIN guard g ON g.id = s.dst
     WHERE s.probe OR (g.tokens IS NOT NULL AND s.n > 0)
     ORDER BY t.id FOR NO KEY UPDATE OF t),
  guarded AS (
    UPDATE destinations t
       SET circuit = CASE WHEN s.probe THEN 'half_open' ELSE t.circuit END,
           tokens = CASE WHEN g.tokens IS NULL THEN t.tokens ELSE g.tokens - s.n END,
           tokens_at = CASE WHEN g.tokens IS NULL THEN t.tokens_at ELSE now() END
      FROM locked l, spent s, guard g
     WHERE t.id = l.id AND s.dst = l.id AND g.id = l.id
    RETURNING t.id),
  held AS (
    SELECT DISTINCT o.dst FROM offered o WHERE o.turn > o.allowed)
  SELECT * FROM claimed
  UNION ALL
  SELECT NULL, NULL, NULL, NULL, NULL, h.dst, NULL, NULL, NULL, NULL, NULL, NULL, 'held', NULL
    FROM held h;
END
$$;
