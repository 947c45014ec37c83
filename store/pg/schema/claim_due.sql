-- The claim: due deliveries for a worker, one round trip and no client-side transaction
-- (docs/architecture.md, "3. Claim"). Round robin over destinations with due hints,
-- per-destination caps across all workers under the claim lock (kClaimLock in
-- store/pg/locks.h), circuit modes and the token bucket (docs/architecture.md, "Receiver
-- protection"), fifo heads (fifo_due_heads.sql), a lease and the claim token.
--
-- It reads and writes only the queue (migrations/0035_delivery_queue.sql), never the
-- history's rows. It locks no row it reads: claims run one at a time under the claim
-- lock, so no other claim can take a row this one offers, and a delivery cancelled
-- meanwhile is passed over by the UPDATE. A row lock is a WAL record, and it locked about
-- twice its batch for the update of half of them.
--
-- Each open destination offers about twice an even share of the batch, or one row when
-- there are more open destinations than that, not its free cap: with 1,024 in flight over
-- 200 slow receivers, offering each its free cap read 2,176 rows for a claim of 64. Picks
-- go by turn (each destination's first, then its second, ...), so offering twice an even
-- share picks what a full offer would whenever every open destination has that many due.
--
-- Ties between deliveries due at the same time are broken by a hash of the destination
-- and the claim's random token: broken in the order the plan met the destinations, a
-- backlog stamped by one statement drained the low ids first and the rest at the end, a
-- few at a time under their caps (over 200 slow receivers, the last destination finished
-- ten seconds after the first).
--
-- The worker's connections make no hash or merge join (store/pg/sql/scripts/
-- key_plans.sql); the claim was planned with both and keeps them.
--
-- The claim reads by plain index scans, never bitmap scans. Every delivery passes through
-- delivery_queue_in_flight on its way to an outcome, and its entry there is dead once the
-- outcome is written. A plain index scan that meets a dead entry marks it, and later scans
-- step over it; a bitmap scan marks nothing, so the claim fetched every delivery sent
-- since the last VACUUM from the heap again, at every claim (2.3 ms where plain index
-- scans take 1.15 ms, measured with `webhookd all` at 2,000 events/s).
CREATE OR REPLACE FUNCTION webhookd.claim_due(batch integer, lease_us bigint, token bigint, default_cap integer)
 RETURNS TABLE(delivery_id bigint, event_id bigint, event_type text, payload text, event_created_at timestamp with time zone, destination_id bigint, url text, secret text, headers text, attempt_count integer, cycle_attempts integer, created_at timestamp with time zone, kind text, clean boolean, egress text, traceparent text, tracestate text, tenant_id text)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_hashjoin TO 'on'
 SET enable_mergejoin TO 'on'
 SET search_path TO 'webhookd'
 SET enable_bitmapscan TO 'off'
AS $function$
#variable_conflict use_column
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  PERFORM pg_advisory_xact_lock(7252011);
  RETURN QUERY
  WITH RECURSIVE busy AS (
    SELECT x.destination_id, count(*)::int AS n FROM delivery_queue x
     WHERE x.claim_token IS NOT NULL GROUP BY x.destination_id),
  -- Protection: per live destination, what its circuit lets through (mode NULL: nothing,
  -- the probe or attempts sent before the circuit opened are still out), its cap in force
  -- and the tokens its bucket holds now (NULL: no rate limit).
  -- The destinations whose earliest hint is due: the only ones read. Each visited one is
  -- hinted afresh below, so one that stays due is visited again next time.
  visited AS MATERIALIZED (
    SELECT h.destination_id AS id, count(*) AS hints FROM due_destinations h
     WHERE h.due_at <= now() GROUP BY h.destination_id),
  guard AS (
    SELECT t.id, coalesce(b.n, 0) AS busy,
           least(coalesce(t.effective_max_in_flight, t.max_in_flight, default_cap),
                 coalesce(t.max_in_flight, default_cap)) AS cap,
           -- One that falls back to its feed (docs/feeds.md, "Fallback") records no skips:
           -- its due deliveries wait for the probe, readable from its feed meanwhile.
           CASE WHEN t.circuit = 'closed' THEN 'send'
                WHEN t.circuit = 'open' AND t.next_probe_at > now()
                THEN CASE WHEN t.fallback IS NULL THEN 'skip' END
                WHEN coalesce(b.n, 0) = 0 THEN 'probe' END AS mode,
           t.ordering = 'fifo' AS fifo, t.on_dead_letter = 'block' AS block,
           CASE WHEN t.rate_limit IS NULL THEN NULL
                WHEN t.tokens_at IS NULL THEN t.rate_limit::float8
                ELSE least(t.rate_limit::float8,
                           t.tokens + t.rate_limit * extract(epoch FROM now() - t.tokens_at)::float8)
           END AS tokens
      FROM visited u JOIN destinations t ON t.id = u.id
      LEFT JOIN busy b ON b.destination_id = t.id
     -- A feed (url `feed:`, docs/feeds.md) is read by its consumer, never sent to.
     WHERE t.enabled AND t.deleted_at IS NULL AND t.url <> 'feed:'),
  -- Each destination's room: a closed one's free cap, a probe's one, an open one's whole
  -- batch (skips send nothing); `allowed` is what its bucket lets start. `share` is twice
  -- its even part of the batch among the open destinations, at least one: the picks go by
  -- turn, so with every one offering that many the batch fills from their first turns,
  -- and about twice the batch is locked (every offered row is locked until the claim
  -- commits; 136 open destinations offering their free cap of 16 locked 2,176 rows to
  -- pick 64).
  room AS (
    SELECT g.id, g.mode, g.fifo, g.block,
           CASE g.mode WHEN 'send' THEN g.cap - g.busy WHEN 'probe' THEN 1 ELSE batch END AS room,
           CASE WHEN g.mode = 'skip' OR g.tokens IS NULL THEN batch
                ELSE floor(g.tokens)::int END AS allowed,
           (2 * batch + count(*) OVER () - 1) / count(*) OVER () AS share
      FROM guard g
     WHERE g.mode IN ('skip', 'probe') OR (g.mode = 'send' AND g.cap > g.busy)),
  -- `want`: the rows each open destination offers. One more than its bucket allows is
  -- looked at (and left alone): it tells that the rate limit held the destination back.
  open AS (
    SELECT r.*, least(r.room, batch, r.allowed + 1, r.share)::int AS want FROM room r),
  -- A fifo destination offers its keys' heads alone (fifo_due_heads, which reads with this
  -- statement's snapshot), each with its key and its place in the walk over the keys; the
  -- others their earliest due deliveries.
  offered AS (
    SELECT c.id, c.next_attempt_at, o.id AS dst, o.mode, o.allowed,
           row_number() OVER (PARTITION BY o.id ORDER BY c.next_attempt_at) AS turn,
           NULL::text AS fifo_key, NULL::int AS walk
      FROM open o CROSS JOIN LATERAL (
      SELECT d.id, d.next_attempt_at FROM delivery_queue d
       WHERE NOT o.fifo AND d.destination_id = o.id AND d.claim_token IS NULL
         AND d.next_attempt_at <= now()
       ORDER BY d.destination_id, d.next_attempt_at LIMIT o.want) c
    UNION ALL
    SELECT c.id, c.next_attempt_at, o.id AS dst, o.mode, o.allowed,
           row_number() OVER (PARTITION BY o.id ORDER BY c.next_attempt_at) AS turn,
           c.ordering_key, c.walk
      FROM open o CROSS JOIN LATERAL
           fifo_due_heads(o.id, o.block, o.want) c
     WHERE o.fifo),
  -- Each fifo destination's next walk begins after the key of the last head this one
  -- offered.
  turned AS (
    INSERT INTO fifo_turns AS t (destination_id, last_key)
    SELECT DISTINCT ON (o.dst) o.dst, o.fifo_key FROM offered o
     WHERE o.walk IS NOT NULL ORDER BY o.dst, o.walk DESC
        ON CONFLICT (destination_id) DO UPDATE SET last_key = excluded.last_key),
  -- Equal due times are common (one ingest statement stamps a whole group of events, and
  -- each event's deliveries to all its destinations): among them the order is drawn
  -- afresh by each claim's random token, so no destination always comes first.
  picked AS (
    SELECT o.id, o.dst, o.mode FROM offered o WHERE o.turn <= o.allowed
     ORDER BY o.turn, o.next_attempt_at, hashint8(o.dst # token) LIMIT batch),
  claimed AS (
    UPDATE delivery_queue q
       SET lease_until = now() + lease_us * interval '1 microsecond', claim_token = token
      FROM picked p, deliveries d, events e, destinations t
     -- By key alone. No other claim can take a picked row (claims run under the claim
     -- lock, and this statement's snapshot was taken after it), and every other writer of
     -- a pending row deletes it (a cancel: the row is passed over) or leaves it pending.
     -- A condition on claim_token here let the planner, on a queue never analyzed, read
     -- the whole due index instead of probing the primary key.
     -- A feed's read (store/pg/sql/lease_feed.sql) is the one writer that may lease a row
     -- of a destination that falls back to its feed meanwhile: the row, read again once
     -- the read's lock is gone, is then passed over. num_nulls() says "not leased" in a
     -- way no index predicate matches, so the plan stays the primary key's.
     WHERE q.id = p.id AND num_nulls(q.claim_token) = 1
       AND d.id = q.id AND e.id = d.event_id AND t.id = q.destination_id
    RETURNING q.id, d.event_id, e.type, e.payload, e.created_at, q.destination_id, t.url,
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
                AND t.effective_max_in_flight IS NULL,
              -- How the worker must connect, when it is more than a URL (mTLS, a CA of its
              -- own, OAuth, a broker's settings): NULL for every other destination, so the
              -- common claim carries nothing more.
              CASE WHEN t.tls_client_certificate IS NOT NULL
                     OR t.tls_ca_certificate IS NOT NULL OR t.auth_token_url IS NOT NULL
                     OR t.broker IS NOT NULL THEN
                json_strip_nulls(json_build_object(
                  'tls', CASE WHEN t.tls_client_certificate IS NOT NULL
                                OR t.tls_ca_certificate IS NOT NULL THEN json_build_object(
                    'client_certificate', t.tls_client_certificate,
                    'client_key', t.tls_client_key,
                    'ca_certificate', t.tls_ca_certificate) END,
                  'auth', CASE WHEN t.auth_token_url IS NOT NULL THEN json_build_object(
                    'token_url', t.auth_token_url,
                    'client_id', t.auth_client_id,
                    'client_secret', t.auth_client_secret,
                    'scope', t.auth_scope) END,
                  -- A broker message carries the event's ordering key (docs/brokers.md).
                  'broker', CASE WHEN t.broker IS NOT NULL THEN json_build_object(
                    'settings', t.broker,
                    'username', t.broker_username,
                    'password', t.broker_password,
                    'ordering_key', q.ordering_key) END))::text END,
              -- The event's trace context and tenant: its row is already joined here.
              e.traceparent, e.tracestate, e.tenant_id),
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
    SELECT DISTINCT o.dst FROM offered o WHERE o.turn > o.allowed),
  -- How many rows each open destination's offer found, against what it could take.
  offer_count AS (
    SELECT o.dst, count(*) AS n FROM offered o GROUP BY o.dst),
  -- The visited destinations' hints, as this statement sees them, give way to one each. A
  -- destination that had no room, or whose offer found all it could take, may have more
  -- due now: it is visited again at the next claim (due now), which costs no probe. One
  -- whose due rows ran out gets its earliest pending delivery not claimed here (none
  -- pending, disabled or deleted: no hint; enabling writes one): the one probe, paid
  -- when a destination drains, not on every claim of a backlog. A hint written by a
  -- transaction still open is not seen, so it is not deleted: a delivery made pending
  -- meanwhile keeps its hint.
  -- Each visited destination's next hint: now (it may still have something due), its
  -- earliest pending delivery not claimed here, or none (nothing pending, disabled or
  -- deleted).
  next_hint AS (
    SELECT v.id, v.hints,
           CASE WHEN t.id IS NULL OR NOT t.enabled OR t.deleted_at IS NOT NULL
                  OR t.url = 'feed:' THEN NULL
                -- Nothing of it is claimed before its probe.
                WHEN t.fallback IS NOT NULL AND t.circuit = 'open' AND t.next_probe_at > now()
                THEN t.next_probe_at
                WHEN o.id IS NULL OR coalesce(c.n, 0) >= o.want
                THEN now()
                WHEN t.ordering <> 'fifo'
                THEN (SELECT d.next_attempt_at FROM delivery_queue d
                       WHERE d.destination_id = t.id AND d.claim_token IS NULL
                         AND d.id NOT IN (SELECT p.id FROM picked p)
                       ORDER BY d.destination_id, d.next_attempt_at LIMIT 1)
                -- fifo: its due heads ran out; the rest wait for a head to finish (which
                -- hints the destination) or for a retry's time.
                ELSE (SELECT d.next_attempt_at FROM delivery_queue d
                       WHERE d.destination_id = t.id AND d.claim_token IS NULL
                         AND d.next_attempt_at > now()
                       ORDER BY d.destination_id, d.next_attempt_at LIMIT 1) END AS at
      FROM visited v LEFT JOIN destinations t ON t.id = v.id
      LEFT JOIN open o ON o.id = v.id
      LEFT JOIN offer_count c ON c.dst = v.id),
  -- A destination still due with its one due hint keeps it as it is: a backlog being
  -- drained rewrites no hint. Any other visited destination's hints, as this statement
  -- sees them, give way to its next one. A hint written by a transaction still open is
  -- not seen, so it is not deleted: a delivery made pending meanwhile keeps its hint.
  unhinted AS (
    DELETE FROM due_destinations h USING next_hint n
     WHERE h.destination_id = n.id AND NOT (n.at = now() AND n.hints = 1)),
  rehinted AS (
    INSERT INTO due_destinations (destination_id, due_at)
      SELECT n.id, n.at FROM next_hint n
       WHERE n.at IS NOT NULL AND NOT (n.at = now() AND n.hints = 1))
  SELECT * FROM claimed
  UNION ALL
  SELECT NULL, NULL, NULL, NULL, NULL, h.dst, NULL, NULL, NULL, NULL, NULL, NULL, 'held', NULL,
         NULL, NULL, NULL, NULL
    FROM held h;
END
$function$;
