-- One statement for a whole batch of attempt outcomes; rows whose claim token no longer
-- matches are left alone and get no attempt row. A queue row is found by its id and
-- token alone: a token is set exactly while it is in flight
-- (migrations/0035_delivery_queue.sql), so the one plan is a key lookup per record
-- (sql/scripts/key_plans.sql). A retry puts the queue row back, due at its next time;
-- any other outcome deletes it. The history row is then finished (or counted on) with an
-- update that changes no indexed column but for a dead letter's stopped_as. What the
-- rest of the statement needs of each applied record, these return: no join of the
-- batch with itself, which without hash joins would cost the square of its size.
--
-- The same statement keeps each destination's protection (the columns:
-- migrations/0034_baseline.sql; this statement is where the breaker and the adaptive
-- cap are defined, and tests/store/pg/protection_rules_pgtest.cc states them as tables of
-- scenarios) and publishes the
-- operational events those changes cause, so an event exists if and only if its change
-- committed.
-- The parameters, bound by name (NamedParams); $1 to $14 and $22 hold one element per
-- record, in the batch's order.
-- @param $1 ids
-- @param $2 claim_tokens
-- @param $3 attempt_numbers
-- @param $4 started_at
-- @param $5 durations_ms
-- @param $6 status_codes
-- @param $7 errors
-- @param $8 response_bodies
-- @param $9 outcomes
-- @param $10 next_statuses
-- @param $11 waits_us
-- @param $12 dead_letter_reasons
-- @param $13 disables
-- @param $14 probes
-- @param $15 circuit_threshold
-- @param $16 first_cooldown_us
-- @param $17 longest_cooldown_us
-- @param $18 probe_jitter (0.2: x[0.8, 1.2])
-- @param $19 disable_after_us WEBHOOKD_DISABLE_AFTER (0: never)
-- @param $20 default_max_in_flight
-- @param $21 wakeup_channel
-- @param $22 jitters one uniform draw in [0, 1) per record, from the worker's random
--            source, that jitters a probe time its record sets
-- Returns the applied delivery ids (circuit NULL), then those of them put in their
-- destination's feed instead of dead letters (circuit 'fallen'), then one row per circuit transition
-- (id NULL, circuit 'open' or 'closed'), then 'notified' when operational events were
-- fanned out.
WITH u AS (
  SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::int[], $4::timestamptz[], $5::int[],
                       $6::int[], $7::text[], $8::text[], $9::text[], $10::text[],
                       $11::bigint[], $12::text[], $13::boolean[], $14::boolean[],
                       $22::float8[])
                  WITH ORDINALITY
    AS u(id, token, attempt_number, started_at, duration_ms, status_code, error, body,
         outcome, next_status, wait_us, reason, disable, probe, jitter, ord)),
-- A destination that falls back to its feed (docs/feeds.md, "Fallback") dead-letters
-- nothing: a delivery that would be stays queued, pending, for its feed alone
-- (migrations/0043_feed_fallback.sql: next_attempt_at 'infinity', feed_at when the feed
-- may hand it out), and one already there stays there, whatever its outcome but an ack.
retried AS (
  UPDATE delivery_queue q
     SET next_attempt_at = CASE WHEN u.next_status = 'pending' AND q.feed_at IS NULL
                                THEN now() + u.wait_us * interval '1 microsecond'
                                ELSE 'infinity' END,
         feed_at = CASE WHEN u.next_status <> 'pending' OR q.feed_at IS NOT NULL
                        THEN now() + u.wait_us * interval '1 microsecond' END,
         lease_until = NULL, claim_token = NULL
    FROM u
   WHERE q.id = u.id AND q.claim_token = u.token
     AND (u.next_status = 'pending'
          OR (u.next_status = 'dead_lettered'
              AND EXISTS (SELECT 1 FROM destinations t
                           WHERE t.id = q.destination_id AND t.fallback = 'feed')))
  RETURNING u.id, u.token, u.attempt_number, u.started_at, u.duration_ms, u.status_code,
            u.error, u.body, u.outcome, 'pending'::text AS next_status, u.wait_us,
            NULL::text AS reason, u.disable, u.probe, u.jitter, u.ord,
            u.next_status <> 'pending' AS fell),
ended AS (
  DELETE FROM delivery_queue q USING u
   WHERE q.id = u.id AND q.claim_token = u.token AND u.next_status <> 'pending'
     AND NOT (u.next_status = 'dead_lettered'
              AND EXISTS (SELECT 1 FROM destinations t
                           WHERE t.id = q.destination_id AND t.fallback = 'feed'))
  RETURNING u.*, false AS fell),
upd AS (
  UPDATE deliveries d
     SET status = x.next_status, attempt_count = x.attempt_number,
         cycle_attempts = d.cycle_attempts + 1, last_attempt_at = x.started_at,
         last_status_code = x.status_code, last_error = x.error, updated_at = now(),
         stopped_as = CASE WHEN x.next_status IN ('dead_lettered', 'cancelled')
                           THEN x.next_status END
    FROM (SELECT * FROM retried UNION ALL SELECT * FROM ended) x
   WHERE d.id = x.id
  RETURNING d.id, d.event_id, d.destination_id, d.kept, x.token, x.attempt_number, x.started_at,
            x.duration_ms, x.status_code, x.error, x.body, x.outcome, x.next_status,
            x.reason, x.disable, x.probe, x.jitter, x.ord),
-- An attempt and a dead letter go where their delivery is: its day, or kept past it
-- (migrations/0038_history_days.sql).
att AS (
  INSERT INTO attempts (delivery_id, attempt_number, started_at, duration_ms, status_code,
                        error, response_body, outcome, kept)
  SELECT id, attempt_number, started_at, duration_ms, status_code, error, body, outcome, kept
    FROM upd),
dl AS (
  INSERT INTO dead_letters (delivery_id, event_id, destination_id, reason, attempt_count,
                            last_status_code, last_error, kept)
  SELECT id, event_id, destination_id, reason, attempt_number, status_code, error, kept
    FROM upd
   WHERE next_status = 'dead_lettered'
  RETURNING id, delivery_id, event_id, destination_id, tenant_id, reason),
-- The destinations' rollups (migrations/0044_destination_stats.sql): one row per
-- destination and minute of the batch, added to in the order the table's key has, so
-- two writers never wait on each other's rows in a cycle. A skip is no attempt and is
-- not counted; a dead letter counts in the minute of its last attempt. A minute whose day
-- has no partition (long gone, or being detached by retention) is not counted.
rolled AS (
  INSERT INTO destination_stats AS s (destination_id, minute, slot, succeeded, retryable,
                                      permanent, dead_lettered, latency)
  SELECT a.destination_id, a.minute, pg_backend_pid() % 4,
         count(*) FILTER (WHERE a.outcome = 'success'),
         count(*) FILTER (WHERE a.outcome = 'retryable'),
         count(*) FILTER (WHERE a.outcome = 'permanent'),
         count(*) FILTER (WHERE a.next_status = 'dead_lettered'),
         webhookd.latency_histogram(array_agg(a.duration_ms) FILTER (WHERE a.outcome <> 'skipped'))
    FROM (SELECT x.*, date_bin('1 minute', x.started_at, timestamptz 'epoch') AS minute
            FROM upd x WHERE x.outcome <> 'skipped' OR x.next_status = 'dead_lettered') a
    JOIN history_days h ON h.day = (a.minute AT TIME ZONE 'UTC')::date
                       AND h.detaching_since IS NULL
   GROUP BY a.destination_id, a.minute
   ORDER BY a.destination_id, a.minute
  ON CONFLICT (destination_id, minute, slot) DO UPDATE
     SET succeeded = s.succeeded + excluded.succeeded,
         retryable = s.retryable + excluded.retryable,
         permanent = s.permanent + excluded.permanent,
         dead_lettered = s.dead_lettered + excluded.dead_lettered,
         latency = webhookd.add_latency(s.latency, excluded.latency)),
-- The same by hour (migrations/0045_destination_stats_hours.sql), after the minutes, so
-- every writer takes its rows in one order.
rolled_hours AS (
  INSERT INTO destination_stats_hours AS s (destination_id, hour, slot, succeeded, retryable,
                                            permanent, dead_lettered, latency)
  SELECT a.destination_id, a.hour, pg_backend_pid() % 4,
         count(*) FILTER (WHERE a.outcome = 'success'),
         count(*) FILTER (WHERE a.outcome = 'retryable'),
         count(*) FILTER (WHERE a.outcome = 'permanent'),
         count(*) FILTER (WHERE a.next_status = 'dead_lettered'),
         webhookd.latency_histogram(array_agg(a.duration_ms) FILTER (WHERE a.outcome <> 'skipped'))
    FROM (SELECT x.*, date_bin('1 hour', x.started_at, timestamptz 'epoch') AS hour
            FROM upd x WHERE x.outcome <> 'skipped' OR x.next_status = 'dead_lettered') a
    JOIN history_days h ON h.day = (a.hour AT TIME ZONE 'UTC')::date
                       AND h.detaching_since IS NULL
   GROUP BY a.destination_id, a.hour
   ORDER BY a.destination_id, a.hour
  ON CONFLICT (destination_id, hour, slot) DO UPDATE
     SET succeeded = s.succeeded + excluded.succeeded,
         retryable = s.retryable + excluded.retryable,
         permanent = s.permanent + excluded.permanent,
         dead_lettered = s.dead_lettered + excluded.dead_lettered,
         latency = webhookd.add_latency(s.latency, excluded.latency)),
-- Protection: the applied outcomes per destination, in the order the worker wrote them.
-- A failure counts toward the circuit (retryable, not 429); a failed attempt (any but a
-- success or a skip) starts failing_since; 429 and 503 throttle the cap. A feed's
-- outcome (a lease token is negative: store/pg/pg_delivery_queue.cc) is a consumer's, not
-- the receiver's, and changes none of it.
seen AS (
  SELECT a.destination_id AS dst, a.ord, a.outcome, a.status_code, a.started_at, a.probe,
         a.jitter,
         a.disable, coalesce(a.error, 'HTTP ' || a.status_code) AS error,
         a.outcome = 'success' AS ok,
         a.outcome = 'retryable' AND a.status_code IS DISTINCT FROM 429 AS failure,
         a.outcome IN ('retryable', 'permanent') AS failed,
         coalesce(a.status_code IN (429, 503), false) AS throttle
    FROM upd a WHERE a.token >= 0),
marked AS (
  SELECT s.*, max(s.ord) FILTER (WHERE s.ok) OVER (PARTITION BY s.dst) AS last_ok
    FROM seen s),
batch AS (
  SELECT m.dst,
         count(*) FILTER (WHERE m.ok)::int AS oks,
         count(*) FILTER (WHERE m.failure)::int AS failures,
         count(*) FILTER (WHERE m.failure AND m.ord > coalesce(m.last_ok, 0))::int AS failures_after_ok,
         min(m.started_at) FILTER (WHERE m.failed AND m.ord > coalesce(m.last_ok, 0)) AS first_failed,
         count(*) FILTER (WHERE m.throttle)::int AS throttles,
         coalesce(bool_or(m.probe AND m.ok), false) AS probe_ok,
         coalesce(bool_or(m.probe AND NOT m.ok), false) AS probe_failed,
         coalesce(bool_or(m.disable), false) AS gone,
         (array_agg(m.error ORDER BY m.ord DESC) FILTER (WHERE m.failure))[1] AS last_error,
         (array_agg(m.jitter ORDER BY m.ord DESC))[1] AS jitter,
         bool_and(m.ok) AS all_ok,
         bool_and(m.outcome = 'skipped') AS all_skipped
    FROM marked m GROUP BY m.dst),
-- Only destinations with something to change are locked: a healthy one at its full cap
-- that only succeeded, or an open one whose batch only skipped and that is not failing
-- for too long, is left alone (no write). Locked in id order, as the claim does.
cur AS MATERIALIZED (
  SELECT t.id, t.tenant_id, t.enabled, t.circuit, t.consecutive_failures, t.failing_since,
         t.next_probe_at, t.cooldown_us, t.success_run, t.ramping, t.disabled_reason,
         coalesce(t.max_in_flight, $20::int) AS max_cap,
         least(coalesce(t.effective_max_in_flight, t.max_in_flight, $20::int),
               coalesce(t.max_in_flight, $20::int)) AS eff,
         b.oks, b.failures, b.failures_after_ok, b.first_failed, b.throttles, b.probe_ok,
         b.probe_failed, b.gone, b.last_error, b.jitter
    FROM destinations t JOIN batch b ON b.dst = t.id
   -- A feed (docs/feeds.md) has no receiver to protect: its failures are a consumer's nacks
   -- and ended leases, which open no circuit and disable nothing.
   WHERE t.url <> 'feed:'
     AND NOT (b.all_ok AND t.circuit = 'closed' AND t.consecutive_failures = 0
              AND t.failing_since IS NULL AND t.effective_max_in_flight IS NULL)
     -- Skips change nothing but can find the destination failing for too long.
     AND NOT (b.all_skipped AND NOT ($19::bigint > 0 AND t.enabled
              AND t.failing_since < now() - $19::bigint * interval '1 microsecond'))
   ORDER BY t.id FOR NO KEY UPDATE OF t),
counted AS (
  SELECT c.*,
         CASE WHEN c.oks > 0 THEN c.failures_after_ok
              ELSE c.consecutive_failures + c.failures END AS consecutive,
         CASE WHEN c.oks > 0 THEN c.first_failed
              ELSE coalesce(c.failing_since, c.first_failed) END AS failing_now,
         c.circuit = 'half_open' AND c.probe_ok AS recovered,
         c.circuit = 'half_open' AND NOT c.probe_ok AND c.probe_failed AS reopened
    FROM cur c),
-- The cap: a recovery restarts it at 1, ramping; each 429/503 halves it and ends a ramp;
-- successes double it while ramping, else a run of `eff` of them adds one.
capped AS (
  SELECT k.*,
         k.circuit = 'closed' AND k.consecutive >= $15::int AS opened,
         CASE WHEN k.recovered THEN 1
              WHEN k.throttles > 0 THEN greatest(1, k.eff >> least(k.throttles, 30))
              WHEN k.oks = 0 OR k.eff >= k.max_cap THEN k.eff
              WHEN k.ramping THEN least(k.max_cap::bigint, k.eff::bigint << least(k.oks, 20))::int
              WHEN k.success_run + k.oks >= k.eff THEN k.eff + 1
              ELSE k.eff END AS new_eff,
         CASE WHEN k.recovered OR k.throttles > 0 OR k.eff >= k.max_cap THEN 0
              WHEN k.oks = 0 OR k.ramping THEN k.success_run
              WHEN k.success_run + k.oks >= k.eff THEN 0
              ELSE k.success_run + k.oks END AS new_run,
         CASE WHEN k.recovered THEN k.max_cap > 1
              WHEN k.throttles > 0 THEN false
              ELSE k.ramping END AS still_ramping,
         CASE WHEN NOT k.enabled THEN NULL
              WHEN k.gone THEN 'gone'
              WHEN $19::bigint > 0 AND k.failing_now < now() - $19::bigint * interval '1 microsecond'
                THEN 'failing' END AS disabling
    FROM counted k),
-- The circuit: opens at the threshold; a failed probe reopens it with the cooldown doubled
-- (at most $17); a successful one closes it. The last record's draw jitters the probe time.
step AS (
  SELECT p.*,
         CASE WHEN p.recovered THEN 'closed' WHEN p.opened OR p.reopened THEN 'open'
              ELSE p.circuit END AS new_circuit,
         CASE WHEN p.recovered THEN NULL
              WHEN p.opened THEN least($16::bigint, $17::bigint)
              WHEN p.reopened THEN least($17::bigint, greatest($16::bigint, coalesce(p.cooldown_us, 0) * 2))
              ELSE p.cooldown_us END AS new_cooldown
    FROM capped p),
timed AS MATERIALIZED (
  SELECT s.*,
         CASE WHEN s.recovered THEN NULL
              WHEN s.opened OR s.reopened
                THEN now() + round(s.new_cooldown * (1 - $18::float8 + 2 * $18::float8 * s.jitter))
                             * interval '1 microsecond'
              ELSE s.next_probe_at END AS new_probe_at
    FROM step s),
health AS (
  UPDATE destinations t
     SET consecutive_failures = s.consecutive, failing_since = s.failing_now,
         circuit = s.new_circuit, cooldown_us = s.new_cooldown, next_probe_at = s.new_probe_at,
         effective_max_in_flight = CASE WHEN s.new_eff >= s.max_cap THEN NULL ELSE s.new_eff END,
         success_run = s.new_run, ramping = s.still_ramping AND s.new_eff < s.max_cap,
         enabled = t.enabled AND s.disabling IS NULL,
         disabled_reason = coalesce(s.disabling, t.disabled_reason),
         updated_at = CASE WHEN s.disabling IS NULL THEN t.updated_at ELSE now() END
    FROM timed s WHERE t.id = s.id),
-- Operational events: no tenant of their own (the payload names the destination's), ids
-- as the API writes them. None is about the delivery of an operational event, so they
-- never feed themselves. They fan out by the rule of every event (webhookd.fan_out,
-- store/pg/schema/fan_out.sql): to tenant-less destinations that name a "webhookd."
-- pattern, as an empty list (every type) does not include webhookd's own types.
ops AS (
  SELECT 'webhookd.destination.circuit_opened' AS type,
         json_build_object('destination_id', 'dst_' || s.id, 'tenant_id', s.tenant_id,
                           'consecutive_failures', s.consecutive,
                           'last_error', s.last_error)::text AS payload
    FROM timed s WHERE s.opened
  UNION ALL
  SELECT 'webhookd.destination.recovered',
         json_build_object('destination_id', 'dst_' || s.id, 'tenant_id', s.tenant_id,
                           'failing_since', to_char(s.failing_since AT TIME ZONE 'UTC',
                                                    'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))::text
    FROM timed s WHERE s.recovered
  UNION ALL
  SELECT 'webhookd.destination.disabled',
         json_build_object('destination_id', 'dst_' || s.id, 'tenant_id', s.tenant_id,
                           'reason', s.disabling)::text
    FROM timed s WHERE s.disabling IS NOT NULL
  UNION ALL
  SELECT 'webhookd.delivery.dead_lettered',
         json_build_object('dead_letter_id', 'dlq_' || x.id, 'delivery_id', 'dlv_' || x.delivery_id,
                           'event_id', 'evt_' || x.event_id,
                           'destination_id', 'dst_' || x.destination_id, 'tenant_id', x.tenant_id,
                           'reason', x.reason)::text
    FROM dl x JOIN events e ON e.id = x.event_id
   WHERE NOT starts_with(e.type, 'webhookd.')),
op_events AS MATERIALIZED (
  SELECT history_id(nextval(pg_get_serial_sequence('events', 'id'))) AS id, o.type, o.payload,
         event_type_keys(o.type) AS keys
    FROM ops o),
op_inserted AS (
  INSERT INTO events (id, type, payload)
  SELECT id, type, payload FROM op_events ORDER BY id),
op_deliveries AS (
  INSERT INTO deliveries (event_id, destination_id)
  SELECT o.id, d.id
    FROM op_events o CROSS JOIN LATERAL webhookd.fan_out(NULL, o.keys, o.payload) d(id)
   ORDER BY o.id, d.id
  RETURNING id),
woken AS (
  SELECT pg_notify($21, '') FROM (SELECT 1 FROM op_deliveries LIMIT 1) x)
SELECT id, NULL::text AS circuit FROM upd
UNION ALL
SELECT id, 'fallen' FROM retried WHERE fell
UNION ALL
SELECT NULL, s.new_circuit FROM timed s WHERE s.opened OR s.reopened OR s.recovered
UNION ALL
SELECT NULL, 'notified' FROM woken
