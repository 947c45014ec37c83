-- Secret rotation: a destination's earlier secrets keep signing until their grace period
-- ends, so a receiver can switch keys without dropping a delivery. The current secret
-- stays in destinations.secret; the earlier ones live here until they expire, and are
-- then erased (they are never shown again).
CREATE TABLE webhookd.destination_secrets (
  destination_id  bigint NOT NULL REFERENCES webhookd.destinations (id),
  secret          text NOT NULL,
  retired_at      timestamptz NOT NULL DEFAULT now(),
  expires_at      timestamptz NOT NULL
);
CREATE INDEX destination_secrets_destination ON webhookd.destination_secrets (destination_id, retired_at);

-- The claim hands the worker every secret that signs (its `secret` column), the rest as
-- in migrations/0003_claim_function.sql.
CREATE OR REPLACE FUNCTION webhookd.claim_due(batch int, lease_us bigint, token bigint, default_cap int)
  RETURNS TABLE (delivery_id bigint, event_id bigint, event_type text, payload text,
                 event_created_at timestamptz, destination_id bigint, url text, secret text,
                 headers text, attempt_count int, cycle_attempts int, created_at timestamptz)
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
              -- Every secret that signs: the current one, then those still in their
              -- grace period, newest first, space-separated (a secret has no spaces).
              concat_ws(' ', VARIADIC t.secret || ARRAY(
                SELECT s.secret FROM destination_secrets s
                 WHERE s.destination_id = t.id AND s.expires_at > now()
                 ORDER BY s.retired_at DESC)),
              t.headers::text, d.attempt_count, d.cycle_attempts, d.created_at)
  SELECT * FROM claimed;
END
$$;
