-- The schema webhookd's migrations and schema files build (migrations/, store/pg/schema/),
-- as `pg_dump --schema-only --schema=webhookd` prints it, less each day's partitions of
-- the history and the rollups (named *_pYYYYMMDD; made a week ahead and dropped by
-- retention: docs/retention.md). Read it to see a table whole; change the schema with
-- a migration, never here. tests/store/pg/live_schema_pgtest.cc holds it equal to what
-- the migrations build, and writes it again when WEBHOOKD_WRITE_SCHEMA=1.
--
-- PostgreSQL database dump
--



SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: webhookd; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA webhookd;


--
-- Name: filter_shape; Type: TYPE; Schema: webhookd; Owner: -
--

CREATE TYPE webhookd.filter_shape AS (
	pos integer,
	refs integer,
	steps integer,
	kvs integer,
	multi boolean,
	kind text,
	problem text
);


--
-- Name: add_history_days(date); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.add_history_days(through date) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'webhookd'
    AS $$
DECLARE
  d date;
  t text;
  part text;
  lo bigint;
  hi bigint;
  added integer := 0;
BEGIN
  PERFORM pg_advisory_xact_lock(7252038);
  SELECT max(h.day) + 1 INTO d FROM history_days h;
  WHILE d <= through LOOP
    lo := (d - date '1970-01-01')::bigint << 36;
    hi := ((d + 1) - date '1970-01-01')::bigint << 36;
    FOREACH t IN ARRAY ARRAY['events', 'deliveries', 'attempts', 'dead_letters', 'event_subjects']
    LOOP
      part := t || '_p' || to_char(d, 'YYYYMMDD');
      EXECUTE format('CREATE TABLE webhookd.%I (LIKE webhookd.%I INCLUDING DEFAULTS'
                     ' INCLUDING CONSTRAINTS)%s', part, t,
                     CASE WHEN t = 'deliveries' THEN ' WITH (fillfactor = 50)' ELSE '' END);
      EXECUTE format('ALTER TABLE webhookd.%I ATTACH PARTITION webhookd.%I'
                     ' FOR VALUES FROM (%s) TO (%s)', t || '_days', part, lo, hi);
    END LOOP;
    FOREACH t IN ARRAY ARRAY['destination_stats', 'destination_stats_hours'] LOOP
      part := t || '_p' || to_char(d, 'YYYYMMDD');
      EXECUTE format('CREATE TABLE webhookd.%I (LIKE webhookd.%I INCLUDING DEFAULTS'
                     ' INCLUDING CONSTRAINTS) WITH (fillfactor = 70)', part, t);
      EXECUTE format('ALTER TABLE webhookd.%I ATTACH PARTITION webhookd.%I'
                     ' FOR VALUES FROM (%L) TO (%L)', t, part, (d::timestamp AT TIME ZONE 'UTC'),
                     ((d + 1)::timestamp AT TIME ZONE 'UTC'));
    END LOOP;
    INSERT INTO history_days (day, event_from, event_to, delivery_from, delivery_to)
    VALUES (d, lo, hi, lo, hi);
    added := added + 1;
    d := d + 1;
  END LOOP;
  RETURN added;
END
$$;


--
-- Name: add_latency(integer[], integer[]); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.add_latency(a integer[], b integer[]) RETURNS integer[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  SELECT array_agg(x + y ORDER BY i) FROM unnest(a, b) WITH ORDINALITY u(x, y, i)
$$;


--
-- Name: bump_catalog_generation(); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.bump_catalog_generation() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'webhookd'
    AS $$
BEGIN
  UPDATE event_catalog SET generation = generation + 1;
  RETURN NULL;
END
$$;


--
-- Name: bump_source_generation(); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.bump_source_generation() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'webhookd'
    AS $$
BEGIN
  UPDATE source_generation SET generation = generation + 1;
  RETURN NULL;
END
$$;


--
-- Name: claim_due(integer, bigint, bigint, integer); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.claim_due(batch integer, lease_us bigint, token bigint, default_cap integer) RETURNS TABLE(delivery_id bigint, event_id bigint, event_type text, payload text, event_created_at timestamp with time zone, destination_id bigint, url text, secret text, headers text, attempt_count integer, cycle_attempts integer, created_at timestamp with time zone, kind text, clean boolean, egress text, traceparent text, tracestate text, tenant_id text)
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    SET enable_seqscan TO 'off'
    SET enable_hashjoin TO 'on'
    SET enable_mergejoin TO 'on'
    SET search_path TO 'webhookd'
    SET enable_bitmapscan TO 'off'
    AS $$
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
$$;


--
-- Name: count_queue_changes(); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.count_queue_changes() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'webhookd'
    AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO queue_counts (created_minute, pending, in_flight)
      SELECT date_trunc('minute', n.created_at), count(*) FILTER (WHERE n.claim_token IS NULL),
             count(*) FILTER (WHERE n.claim_token IS NOT NULL)
        FROM new_rows n GROUP BY 1;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO queue_counts (created_minute, pending, in_flight)
      SELECT date_trunc('minute', o.created_at), -count(*) FILTER (WHERE o.claim_token IS NULL),
             -count(*) FILTER (WHERE o.claim_token IS NOT NULL)
        FROM old_rows o GROUP BY 1;
  ELSE
    -- A claim, a retry, a release or a lease's end moves rows between the two counts; a
    -- new due time or lease moves none, and adds nothing.
    INSERT INTO queue_counts (created_minute, pending, in_flight)
      SELECT x.m, sum(x.p), sum(x.f) FROM (
        SELECT date_trunc('minute', n.created_at) AS m, (n.claim_token IS NULL)::int AS p,
               (n.claim_token IS NOT NULL)::int AS f
          FROM new_rows n
        UNION ALL
        SELECT date_trunc('minute', o.created_at), -(o.claim_token IS NULL)::int,
               -(o.claim_token IS NOT NULL)::int
          FROM old_rows o) x
       GROUP BY x.m HAVING sum(x.p) <> 0 OR sum(x.f) <> 0;
  END IF;
  RETURN NULL;
END
$$;


--
-- Name: count_truncated_queue(); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.count_truncated_queue() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'webhookd'
    AS $$
BEGIN
  DELETE FROM queue_counts;
  DELETE FROM queue_counts_by_minute;
  RETURN NULL;
END
$$;


--
-- Name: dead_letter_tenant(); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.dead_letter_tenant() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'webhookd'
    AS $$
BEGIN
  SELECT d.tenant_id INTO NEW.tenant_id FROM deliveries d WHERE d.id = NEW.delivery_id;
  RETURN NEW;
END
$$;


--
-- Name: delivery_gauges(); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.delivery_gauges(OUT pending bigint, OUT in_flight bigint, OUT unfinished_over_24h bigint) RETURNS record
    LANGUAGE plpgsql
    SET search_path TO 'webhookd'
    AS $$
#variable_conflict use_column
BEGIN
  IF pg_try_advisory_xact_lock(7252013) THEN
    WITH gone AS (
      DELETE FROM queue_counts RETURNING created_minute, pending, in_flight),
    moved AS (
      SELECT g.created_minute, sum(g.pending) AS pending, sum(g.in_flight) AS in_flight
        FROM gone g GROUP BY g.created_minute),
    merged AS (
      INSERT INTO queue_counts_by_minute AS m (created_minute, pending, in_flight)
        SELECT * FROM moved
        ON CONFLICT (created_minute) DO UPDATE
          SET pending = m.pending + excluded.pending, in_flight = m.in_flight + excluded.in_flight
        RETURNING 1),
    total AS (
      SELECT m.created_minute, m.pending, m.in_flight FROM queue_counts_by_minute m
      UNION ALL
      SELECT * FROM moved)
    SELECT coalesce(sum(t.pending), 0), coalesce(sum(t.in_flight), 0),
           coalesce(sum(t.pending + t.in_flight)
                      FILTER (WHERE t.created_minute < now() - interval '24 hours'), 0)
      INTO pending, in_flight, unfinished_over_24h FROM total t;
    -- A statement of its own: the one above cannot delete what it has just written.
    DELETE FROM queue_counts_by_minute WHERE pending = 0 AND in_flight = 0;
  ELSE
    SELECT coalesce(sum(t.pending), 0), coalesce(sum(t.in_flight), 0),
           coalesce(sum(t.pending + t.in_flight)
                      FILTER (WHERE t.created_minute < now() - interval '24 hours'), 0)
      INTO pending, in_flight, unfinished_over_24h
      FROM (SELECT created_minute, pending, in_flight FROM queue_counts_by_minute
            UNION ALL
            SELECT created_minute, pending, in_flight FROM queue_counts) t;
  END IF;
END
$$;


--
-- Name: drop_detached_history_day(date); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.drop_detached_history_day(day date) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'webhookd'
    AS $_$
DECLARE
  sfx text := '_p' || to_char(day, 'YYYYMMDD');
  h history_days;
  scan_to bigint;
  t text;
  kept_events integer;
BEGIN
  SELECT * INTO h FROM history_days d WHERE d.day = drop_detached_history_day.day;
  IF NOT FOUND THEN
    RETURN 0;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
              WHERE c.relnamespace = 'webhookd'::regnamespace
                AND c.relname IN ('events' || sfx, 'deliveries' || sfx, 'attempts' || sfx,
                                  'dead_letters' || sfx, 'event_subjects' || sfx,
                                  'destination_stats' || sfx,
                                  'destination_stats_hours' || sfx)) THEN
    RAISE EXCEPTION 'day % of the history is still attached', day;
  END IF;
  SELECT coalesce((SELECT n.delivery_to FROM history_days n WHERE n.day > h.day
                    ORDER BY n.day LIMIT 1), h.delivery_to) INTO scan_to;

  -- The events to keep: those with a delivery in the queue, and those already kept.
  CREATE TEMP TABLE rescued_events ON COMMIT DROP AS SELECT NULL::bigint AS id LIMIT 0;
  EXECUTE format(
    'INSERT INTO rescued_events'
    ' SELECT d.event_id FROM %1$I d WHERE d.id IN (SELECT q.id FROM delivery_queue q'
    '   WHERE q.id >= %2$s AND q.id < %3$s)'
    ' UNION SELECT d.event_id FROM deliveries d WHERE d.id IN (SELECT q.id FROM delivery_queue q'
    '   WHERE q.id >= %2$s AND q.id < %3$s)'
    ' UNION SELECT d.event_id FROM %1$I d WHERE d.event_id IN (SELECT k.id FROM events_kept k)',
    'deliveries' || sfx, coalesce(h.delivery_from, -9223372036854775808), scan_to);
  EXECUTE format('DELETE FROM rescued_events r WHERE NOT EXISTS'
                 ' (SELECT 1 FROM %I e WHERE e.id = r.id)'
                 ' AND NOT EXISTS (SELECT 1 FROM %I d WHERE d.event_id = r.id)',
                 'events' || sfx, 'deliveries' || sfx);
  SELECT count(*) INTO kept_events FROM rescued_events;

  IF kept_events > 0 THEN
    -- Each row as it was, with kept set, through jsonb, so one text serves every table.
    EXECUTE format(
      'INSERT INTO events SELECT (jsonb_populate_record(NULL::events,'
      ' to_jsonb(x) || ''{"kept": true}'')).* FROM %I x WHERE x.id IN (SELECT id FROM rescued_events)',
      'events' || sfx);
    CREATE TEMP TABLE rescued_deliveries ON COMMIT DROP AS SELECT NULL::bigint AS id LIMIT 0;
    EXECUTE format(
      'WITH moved AS (INSERT INTO deliveries SELECT (jsonb_populate_record(NULL::deliveries,'
      ' to_jsonb(x) || ''{"kept": true}'')).* FROM %I x'
      ' WHERE x.event_id IN (SELECT id FROM rescued_events) RETURNING id)'
      ' INSERT INTO rescued_deliveries SELECT id FROM moved',
      'deliveries' || sfx);
    FOREACH t IN ARRAY ARRAY['attempts', 'dead_letters'] LOOP
      EXECUTE format(
        'INSERT INTO %1$I SELECT (jsonb_populate_record(NULL::%1$I,'
        ' to_jsonb(x) || ''{"kept": true}'')).* FROM %2$I x'
        ' WHERE x.delivery_id IN (SELECT id FROM rescued_deliveries)', t, t || sfx);
    END LOOP;
    EXECUTE format(
      'INSERT INTO event_subjects SELECT (jsonb_populate_record(NULL::event_subjects,'
      ' to_jsonb(x) || ''{"kept": true}'')).* FROM %I x'
      ' WHERE x.event_id IN (SELECT id FROM rescued_events)', 'event_subjects' || sfx);
  END IF;

  -- The day's destination rollups (migrations/0044_destination_stats.sql) go with it.
  FOREACH t IN ARRAY ARRAY['events', 'deliveries', 'attempts', 'dead_letters', 'event_subjects',
                           'destination_stats', 'destination_stats_hours']
  LOOP
    EXECUTE format('DROP TABLE IF EXISTS %I', t || sfx);
  END LOOP;
  DELETE FROM history_days d WHERE d.day = drop_detached_history_day.day;
  RETURN kept_events;
END
$_$;


--
-- Name: event_id_bound_before(timestamp with time zone); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.event_id_bound_before(before timestamp with time zone) RETURNS bigint
    LANGUAGE sql STABLE PARALLEL SAFE
    SET search_path TO 'webhookd'
    AS $$
  SELECT coalesce(
    (SELECT CASE WHEN h.event_from = (h.day - date '1970-01-01')::bigint << 36 THEN h.event_to
                 ELSE (SELECT n.event_to FROM history_days n WHERE n.day > h.day
                        ORDER BY n.day LIMIT 1) END
       FROM history_days h
      WHERE h.day <= (before AT TIME ZONE 'UTC')::date ORDER BY h.day DESC LIMIT 1),
    9223372036854775807)
$$;


--
-- Name: event_type_keys(text); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.event_type_keys(type text) RETURNS text[]
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    AS $$
DECLARE
  keys text[] := ARRAY[type];
  at int := 0;  -- the length of the prefix scanned so far
  dot int := strpos(type, '.');
BEGIN
  WHILE dot > 0 LOOP
    at := at + dot;
    keys := keys || (left(type, at) || '*');
    dot := strpos(substr(type, at + 1), '.');
  END LOOP;
  RETURN keys;
END
$$;


--
-- Name: event_type_matches(text[], text); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.event_type_matches(patterns text[], type text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN ((cardinality(patterns) = 0) OR (patterns && webhookd.event_type_keys(type)));


--
-- Name: fan_out(text, text[], text); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.fan_out(tenant text, keys text[], payload text) RETURNS SETOF bigint
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  SELECT t.id
    FROM (SELECT CASE WHEN EXISTS (
                   SELECT 1 FROM webhookd.destinations f
                    WHERE f.filter IS NOT NULL AND f.enabled AND f.deleted_at IS NULL
                      AND coalesce(f.tenant_id, '') = coalesce(fan_out.tenant, '')
                      AND ((cardinality(f.event_types) = 0
                            AND NOT fan_out.keys @> '{webhookd.*}')
                           OR f.event_types && fan_out.keys))
                 THEN webhookd.payload_jsonb(fan_out.payload) END AS doc
          OFFSET 0) j,
         webhookd.destinations t
   WHERE t.enabled AND t.deleted_at IS NULL
     AND coalesce(t.tenant_id, '') = coalesce(fan_out.tenant, '')
     AND ((cardinality(t.event_types) = 0 AND NOT fan_out.keys @> '{webhookd.*}')
          OR t.event_types && fan_out.keys)
     AND (t.filter_path IS NULL OR jsonb_path_match(j.doc, t.filter_path, '{}', true))
  OFFSET 0
$$;


--
-- Name: fifo_blocked_by(bigint, bigint, text); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.fifo_blocked_by(delivery bigint, dest bigint, key text) RETURNS bigint
    LANGUAGE sql STABLE
    SET search_path TO 'webhookd'
    AS $$
  SELECT coalesce(
           (SELECT min(u.id) FROM (
              (SELECT x.id FROM delivery_queue x
                WHERE x.destination_id = dest AND x.fifo AND x.claim_token IS NULL
                  AND coalesce(x.ordering_key, '') = coalesce(key, '') AND x.id < delivery
                ORDER BY coalesce(x.ordering_key, ''), x.id LIMIT 1)
              UNION ALL
              (SELECT min(x.id) FROM delivery_queue x
                WHERE x.destination_id = dest AND x.fifo AND x.claim_token IS NOT NULL
                  AND coalesce(x.ordering_key, '') = coalesce(key, '')
                  AND x.id < delivery)) u),
           (SELECT min(x.id) FROM delivery_queue x
             WHERE x.destination_id = dest AND x.fifo AND x.claim_token IS NOT NULL
               AND coalesce(x.ordering_key, '') = coalesce(key, '')),
           CASE WHEN t.on_dead_letter = 'block' THEN
             (SELECT l.delivery_id FROM dead_letters l JOIN deliveries b ON b.id = l.delivery_id
               WHERE l.destination_id = dest AND l.replayed_at IS NULL
                 AND l.dismissed_at IS NULL AND l.delivery_id < delivery
                 AND coalesce(b.ordering_key, '') = coalesce(key, '')
               ORDER BY l.delivery_id LIMIT 1) END)
    FROM destinations t WHERE t.id = dest AND t.ordering = 'fifo'
$$;


--
-- Name: fifo_due_heads(bigint, boolean, integer); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.fifo_due_heads(dest bigint, block boolean, want integer) RETURNS TABLE(id bigint, next_attempt_at timestamp with time zone, ordering_key text, walk integer)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'webhookd'
    AS $$
#variable_conflict use_column
DECLARE
  start_after text;  -- the walk's first key is the first greater than this one
BEGIN
  SELECT t.last_key INTO start_after FROM fifo_turns t WHERE t.destination_id = dest;
  -- keys(k, wrapped, n): from the first key after start_after to the last, then (wrapped)
  -- from the first key on, up to start_after; n is the walk's order. None remembered:
  -- every key, in order. Evaluated only as far as the LIMIT needs (0018).
  RETURN QUERY
  WITH RECURSIVE keys(k, wrapped, n) AS (
    SELECT coalesce(f.k, (SELECT coalesce(x.ordering_key, '') FROM delivery_queue x
                           WHERE x.destination_id = dest AND x.fifo
                             AND x.claim_token IS NULL
                           ORDER BY coalesce(x.ordering_key, '') LIMIT 1)),
           f.k IS NULL, 1
      FROM (SELECT (SELECT coalesce(x.ordering_key, '') FROM delivery_queue x
                     WHERE x.destination_id = dest AND x.fifo
                       AND x.claim_token IS NULL
                       AND coalesce(x.ordering_key, '') > start_after
                     ORDER BY coalesce(x.ordering_key, '') LIMIT 1) AS k) f
    UNION ALL
    SELECT coalesce(s.k, CASE WHEN NOT keys.wrapped THEN (
             SELECT coalesce(x.ordering_key, '') FROM delivery_queue x
              WHERE x.destination_id = dest AND x.fifo
                AND x.claim_token IS NULL
              ORDER BY coalesce(x.ordering_key, '') LIMIT 1) END),
           keys.wrapped OR s.k IS NULL, keys.n + 1
      FROM keys CROSS JOIN LATERAL (
        SELECT (SELECT coalesce(x.ordering_key, '') FROM delivery_queue x
                 WHERE x.destination_id = dest AND x.fifo
                   AND x.claim_token IS NULL
                   AND coalesce(x.ordering_key, '') > keys.k
                 ORDER BY coalesce(x.ordering_key, '') LIMIT 1) AS k) s
     WHERE keys.k IS NOT NULL
       AND (NOT keys.wrapped OR start_after IS NULL OR keys.k < start_after)),
  due AS (
    SELECT h.id, h.next_attempt_at, keys.k, keys.n FROM keys CROSS JOIN LATERAL (
      SELECT x.id, x.next_attempt_at FROM delivery_queue x
       WHERE x.destination_id = dest AND x.fifo AND coalesce(x.ordering_key, '') = keys.k
         AND x.claim_token IS NULL
       ORDER BY coalesce(x.ordering_key, ''), x.id LIMIT 1) h
     WHERE keys.k IS NOT NULL
       AND (NOT keys.wrapped OR start_after IS NULL OR keys.k <= start_after)
       AND h.next_attempt_at <= now()
       AND NOT EXISTS (SELECT 1 FROM delivery_queue f
                        WHERE f.destination_id = dest AND f.fifo AND f.claim_token IS NOT NULL
                          AND coalesce(f.ordering_key, '') = keys.k)
       AND NOT (block AND EXISTS (
             SELECT 1 FROM dead_letters l JOIN deliveries b ON b.id = l.delivery_id
              WHERE l.destination_id = dest AND l.replayed_at IS NULL
                AND l.dismissed_at IS NULL AND l.delivery_id < h.id
                AND coalesce(b.ordering_key, '') = keys.k))
     LIMIT want)
  SELECT due.id, due.next_attempt_at, due.k, due.n FROM due;
END
$$;


--
-- Name: filter_problem(text); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.filter_problem(filter text) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path TO 'webhookd'
    AS $_$
DECLARE
  v_path jsonpath;
  v_text text;
  v_bare text;
  v_kinds text[];
  v_stack text := '';
  v_ch text;
  v_pattern text;
  v_regexes int := 0;
  v_shape text;
BEGIN
  IF octet_length(filter) > 4096 THEN
    RETURN 'must be at most 4096 bytes';
  END IF;
  BEGIN
    v_path := filter::jsonpath;
  EXCEPTION WHEN OTHERS THEN
    RETURN 'is not a valid SQL/JSON path predicate: ' || SQLERRM;
  END;
  v_text := v_path::text;  -- normalized: strings double-quoted, variables as $"name"
  v_bare := regexp_replace(v_text, '"(\\.|[^"\\])*"', '""', 'g');
  IF position('$""' IN v_bare) > 0 THEN
    RETURN 'may not use variables ($name): a filter sees the payload ($) alone';
  ELSIF v_bare ~ '\.datetime\(' THEN
    RETURN 'may not use .datetime(); compare RFC 3339 strings instead ($.at >= "2026-01-01")';
  ELSIF length(v_bare) - length(replace(v_bare, '**', '')) > 2 THEN
    RETURN 'may use ** at most once';
  END IF;
  -- $ inside a filter expression: walk the parentheses, "f" for ?( and "g" for (.
  FOR i IN 1 .. length(v_bare) LOOP
    v_ch := substr(v_bare, i, 1);
    IF v_ch = '(' THEN
      v_stack := v_stack || CASE WHEN i > 1 AND substr(v_bare, i - 1, 1) = '?' THEN 'f' ELSE 'g' END;
    ELSIF v_ch = ')' THEN
      v_stack := left(v_stack, -1);
    ELSIF v_ch = '$' AND position('f' IN v_stack) > 0 THEN
      RETURN 'may not use $ inside a filter expression ?(…): use @, the current item';
    END IF;
  END LOOP;
  FOR v_pattern IN SELECT m[1] FROM regexp_matches(v_text, 'like_regex "((\\.|[^"\\])*)"', 'g') m LOOP
    v_regexes := v_regexes + 1;
    IF v_regexes > 4 THEN
      RETURN 'may use like_regex at most 4 times';
    ELSIF length(v_pattern) > 128 THEN
      RETURN 'like_regex patterns may be at most 128 characters long';
    ELSIF v_pattern ~ '\\\\[1-9]' THEN
      RETURN 'may not use back-references (\1 … \9) in like_regex';
    ELSIF (SELECT count(*) > 2 OR coalesce(bool_or(greatest(nullif(q[1], '')::numeric,
                                                            nullif(q[2], '')::numeric) > 16), false)
             FROM regexp_matches(v_pattern, '\{([0-9]*)(?:,([0-9]*))?\}', 'g') q) THEN
      RETURN 'like_regex may use at most two counted repetitions {n,m}, each with bounds up to 16';
    END IF;
  END LOOP;
  v_shape := filter_shape_problem(v_text);
  IF v_shape IS NOT NULL THEN
    RETURN v_shape;
  END IF;
  SELECT array_agg(jsonb_typeof(v)) INTO v_kinds
    FROM jsonb_path_query('{}'::jsonb, v_path, '{}', true) v;
  IF v_kinds IS NULL OR cardinality(v_kinds) <> 1 OR v_kinds[1] NOT IN ('boolean', 'null') THEN
    RETURN 'must be a predicate, true or false for a payload: a comparison, exists(…), '
           'like_regex, starts with, is unknown, or !, && and || of them';
  END IF;
  RETURN NULL;
END
$_$;


--
-- Name: filter_shape_accessors(text[], webhookd.filter_shape, boolean, boolean, boolean, boolean); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.filter_shape_accessors(t text[], s webhookd.filter_shape, in_filter boolean, is_strict boolean, paren boolean, payload boolean) RETURNS webhookd.filter_shape
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'webhookd'
    AS $_$
DECLARE
  v_tok text;
  v_left webhookd.filter_shape;
  v_steps int := 0;
  v_wide boolean := false;
  v_refs int;
  v_subs int;
  v_ranged boolean;
BEGIN
  LOOP
    EXIT WHEN s.problem IS NOT NULL;
    v_tok := t[s.pos];
    IF v_tok = '.' AND t[s.pos + 1] ~ '^"' THEN
      s.pos := s.pos + 2;
    ELSIF v_tok = '.*' OR v_tok ~ '^\.\*\*' THEN
      s.pos := s.pos + 1;
      v_wide := true;
    ELSIF v_tok = '[' THEN
      s.pos := s.pos + 1;
      v_subs := 0;
      v_ranged := false;
      IF t[s.pos] = '*' AND t[s.pos + 1] = ']' THEN
        s.pos := s.pos + 2;
        v_wide := true;
      ELSE
        v_refs := s.refs;
        LOOP
          v_subs := v_subs + 1;
          s := filter_shape_expr(t, s, 0, in_filter, is_strict);
          EXIT WHEN s.problem IS NOT NULL;
          IF t[s.pos] = 'to' THEN
            v_ranged := true;
            s.pos := s.pos + 1;
            s := filter_shape_expr(t, s, 0, in_filter, is_strict);
            EXIT WHEN s.problem IS NOT NULL;
          END IF;
          v_tok := t[s.pos];
          s.pos := s.pos + 1;
          EXIT WHEN v_tok IS DISTINCT FROM ',';
        END LOOP;
        IF s.problem IS NULL AND s.refs > v_refs THEN
          s.problem := 'array subscripts may be numbers and last alone, not paths into the payload';
        ELSIF v_subs > 1 THEN
          s.problem := 'may use one subscript or one range per [ ] ([0], [1 to 3]): each '
                       'subscript of a list yields its items again, [0,0] twice';
        ELSIF v_ranged THEN
          v_wide := true;
        END IF;
      END IF;
    ELSIF v_tok = '?(' THEN
      s.pos := s.pos + 1;
      v_left := s;
      s := filter_shape_expr(t, s, 0, true, is_strict);
      s.pos := s.pos + 1;  -- )
      s.multi := v_left.multi;
      s.kind := v_left.kind;
    ELSIF v_tok ~ '^\.[a-z_]+\($' THEN
      IF v_tok = '.keyvalue(' THEN
        s.kvs := s.kvs + 1;
        v_wide := true;
      END IF;
      s.pos := s.pos + 2;  -- the method and )
    ELSE
      EXIT;
    END IF;
    v_steps := v_steps + 1;
    s.steps := s.steps + 1;
    IF s.kind IN ('num', 'long', 'lit') THEN
      s.kind := 'val';
    ELSIF s.kind = 'pred' THEN
      s.kind := 'path';
    END IF;
  END LOOP;
  IF s.problem IS NOT NULL THEN
    RETURN s;
  END IF;
  -- Lax mode unwraps an array wherever a value is compared, so a path into the payload
  -- is a sequence there whatever its steps.
  IF NOT paren THEN
    s.multi := payload AND (v_wide OR NOT is_strict);
  ELSIF v_steps > 0 THEN
    s.multi := payload OR v_wide OR (NOT is_strict AND s.refs > 0);
  ELSE
    s.multi := payload;
  END IF;
  RETURN s;
END
$_$;


--
-- Name: filter_shape_expr(text[], webhookd.filter_shape, integer, boolean, boolean); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.filter_shape_expr(t text[], s webhookd.filter_shape, min_prec integer, in_filter boolean, is_strict boolean) RETURNS webhookd.filter_shape
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'webhookd'
    AS $_$
DECLARE
  v_tok text;
  v_prec int;
  v_left webhookd.filter_shape;
  v_payload boolean := false;  -- the path starts at $ or @
  v_paren boolean := false;    -- ... or at ( … ), which yields several items if v_payload
BEGIN
  v_tok := t[s.pos];
  -- The operand: unary operators, parentheses, literals and paths.
  IF v_tok = '!' THEN
    s.pos := s.pos + 1;
    s := filter_shape_expr(t, s, 6, in_filter, is_strict);
    s.kind := 'pred';
    s.multi := false;
  ELSIF v_tok IN ('-', '+') THEN
    s.pos := s.pos + 1;
    s := filter_shape_expr(t, s, 6, in_filter, is_strict);
    IF s.kind NOT IN ('num', 'long', 'pred') THEN
      s.kind := 'val';
    END IF;
  ELSIF v_tok = 'exists' AND t[s.pos + 1] = '(' THEN
    s.pos := s.pos + 2;
    s := filter_shape_expr(t, s, 0, in_filter, is_strict);
    s.pos := s.pos + 1;  -- )
    s.kind := 'pred';
    s.multi := false;
  ELSE
    IF v_tok = '(' THEN
      s.pos := s.pos + 1;
      s := filter_shape_expr(t, s, 0, in_filter, is_strict);
      s.pos := s.pos + 1;  -- )
      IF t[s.pos] = 'is' AND t[s.pos + 1] = 'unknown' THEN
        s.pos := s.pos + 2;
        s.kind := 'pred';
        s.multi := false;
      END IF;
      v_paren := true;
      v_payload := s.multi;
    ELSIF v_tok IN ('$', '@') THEN
      IF v_tok = '$' AND in_filter THEN
        s.problem := 'may not use $ inside a filter expression ?(…): use @, the current item';
        RETURN s;
      END IF;
      s.pos := s.pos + 1;
      s.refs := s.refs + 1;
      s.kind := 'path';
      v_payload := true;
    ELSIF v_tok ~ '^[0-9]' THEN
      s.pos := s.pos + 1;
      s.kind := CASE WHEN length(regexp_replace(v_tok, '[^0-9]', '', 'g')) > 64 THEN 'long'
                     ELSE 'num' END;
    ELSIF v_tok = 'last' THEN
      s.pos := s.pos + 1;
      s.kind := 'val';
    ELSIF v_tok ~ '^"' OR v_tok IN ('true', 'false', 'null') THEN
      s.pos := s.pos + 1;
      s.kind := 'lit';
    ELSE
      s.problem := 'has a shape webhookd cannot check near "' || coalesce(v_tok, 'the end') || '"';
      RETURN s;
    END IF;
    IF NOT v_paren THEN
      s.multi := false;
    END IF;
    s := filter_shape_accessors(t, s, in_filter, is_strict, v_paren, v_payload);
  END IF;
  -- Binary operators of at least min_prec, left to right.
  LOOP
    EXIT WHEN s.problem IS NOT NULL;
    v_tok := t[s.pos];
    v_prec := CASE
      WHEN v_tok = '||' THEN 1
      WHEN v_tok = '&&' THEN 2
      WHEN v_tok IN ('==', '!=', '<>', '<', '<=', '>', '>=', 'starts', 'like_regex') THEN 3
      WHEN v_tok IN ('+', '-') THEN 4
      WHEN v_tok IN ('*', '/', '%') THEN 5
    END;
    EXIT WHEN v_prec IS NULL OR v_prec < min_prec;
    IF v_tok = 'like_regex' THEN
      s.pos := s.pos + 2;  -- like_regex "pattern"
      IF t[s.pos] = 'flag' THEN
        s.pos := s.pos + 2;
      END IF;
      s.kind := 'pred';
      s.multi := false;
      CONTINUE;
    END IF;
    s.pos := s.pos + CASE WHEN v_tok = 'starts' THEN 2 ELSE 1 END;
    v_left := s;
    s := filter_shape_expr(t, s, v_prec + 1, in_filter, is_strict);
    EXIT WHEN s.problem IS NOT NULL;
    s := filter_shape_operator(v_tok, v_prec, v_left, s);
  END LOOP;
  RETURN s;
END
$_$;


--
-- Name: filter_shape_operator(text, integer, webhookd.filter_shape, webhookd.filter_shape); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.filter_shape_operator(op text, prec integer, l webhookd.filter_shape, s webhookd.filter_shape) RETURNS webhookd.filter_shape
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'webhookd'
    AS $$
BEGIN
  IF prec = 3 THEN
    IF l.multi AND s.multi THEN
      s.problem := 'may not compare two sequences (' || op || ' with several items on both '
                   'sides, which compares each item with each): compare with a literal, or '
                   'write strict and paths without [*], .*, **, [a to b] or .keyvalue()';
    END IF;
    s.kind := 'pred';
    s.multi := false;
  ELSIF prec IN (1, 2) THEN
    s.kind := 'pred';
    s.multi := false;
  ELSE
    IF 'long' IN (l.kind, s.kind) THEN
      s.problem := 'may not use numbers longer than 64 digits in arithmetic';
    ELSIF op = '*' AND l.kind <> 'num' AND s.kind <> 'num' THEN
      s.problem := 'may multiply only by a number literal: the cost of multiplying two '
                   'numbers of the payload grows with the product of their lengths';
    ELSIF op IN ('/', '%') AND s.kind <> 'num' THEN
      s.problem := 'may divide only by a number literal (' || op || ' with a number literal '
                   'on the right): the cost of dividing by a number of the payload grows with '
                   'the product of their lengths';
    END IF;
    -- Arithmetic yields one value, or an error that makes the filter unknown.
    s.kind := 'val';
    s.multi := false;
  END IF;
  RETURN s;
END
$$;


--
-- Name: filter_shape_problem(text); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.filter_shape_problem(normalized text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'webhookd'
    AS $_$
DECLARE
  v_tokens text[];
  v_strict boolean := false;
  v_shape webhookd.filter_shape;
BEGIN
  SELECT array_agg(m[1] ORDER BY n) INTO v_tokens
    FROM regexp_matches(normalized,
           '("(?:\\.|[^"\\])*"|[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|\.\*\*(?:\{[^}]*\})?|'
           '\.\*|\.[a-z_]+\(|\?\(|&&|\|\||==|!=|<>|<=|>=|[a-z_]+|[$@()\[\],<>!+*/%.-])',
           'g') WITH ORDINALITY AS r(m, n);
  IF v_tokens[1] IN ('strict', 'lax') THEN
    v_strict := v_tokens[1] = 'strict';
    v_tokens := v_tokens[2:];
  END IF;
  v_shape := filter_shape_expr(v_tokens, ROW(1, 0, 0, 0, false, NULL, NULL)::filter_shape, 0,
                               false, v_strict);
  IF v_shape.problem IS NOT NULL THEN
    RETURN v_shape.problem;
  ELSIF v_shape.pos <> cardinality(v_tokens) + 1 THEN
    RETURN 'has a shape webhookd cannot check near "' || v_tokens[v_shape.pos] || '"';
  ELSIF v_shape.refs + v_shape.steps > 12 THEN
    RETURN 'may have at most 12 path parts in all: each $ and @, and each .key, [*], [0], '
           '.*, **, ?(…), .size() and other method after them, counts one';
  ELSIF v_shape.kvs > 1 THEN
    RETURN 'may use .keyvalue() at most once';
  ELSIF v_shape.kvs > 0 AND position('**' IN normalized) > 0 THEN
    RETURN 'may not use .keyvalue() with **: it would copy every value below each node';
  END IF;
  RETURN NULL;
EXCEPTION WHEN OTHERS THEN
  -- Deep nesting can exhaust the stack of the recursive reader.
  RETURN 'is nested too deeply to check';
END
$_$;


--
-- Name: filter_test(text, jsonb); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.filter_test(filter text, payload jsonb) RETURNS boolean
    LANGUAGE plpgsql STABLE
    SET search_path TO 'webhookd'
    AS $$
DECLARE
  v_problem text := filter_problem(filter);
BEGIN
  IF v_problem IS NOT NULL THEN
    RAISE EXCEPTION 'filter: %', v_problem USING ERRCODE = '22023';
  END IF;
  RETURN coalesce(jsonb_path_match(payload, filter::jsonpath, '{}', true), false);
END
$$;


--
-- Name: first_event_id_at(timestamp with time zone); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.first_event_id_at(since timestamp with time zone) RETURNS bigint
    LANGUAGE sql STABLE PARALLEL SAFE
    SET search_path TO 'webhookd'
    AS $$
  SELECT CASE
    WHEN since IS NULL OR (since AT TIME ZONE 'UTC')::date <= (SELECT min(day) FROM history_days)
      THEN -9223372036854775808
    ELSE coalesce((SELECT h.event_from FROM history_days h
                    WHERE h.day >= (since AT TIME ZONE 'UTC')::date ORDER BY h.day LIMIT 1),
                  9223372036854775807) END
$$;


--
-- Name: hint_enabled_destination(); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.hint_enabled_destination() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'webhookd'
    AS $$
BEGIN
  INSERT INTO due_destinations (destination_id, due_at) VALUES (NEW.id, now());
  RETURN NULL;
END
$$;


--
-- Name: hint_finished_fifo(); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.hint_finished_fifo() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'webhookd'
    AS $$
BEGIN
  INSERT INTO due_destinations (destination_id, due_at) VALUES (OLD.destination_id, now());
  RETURN NULL;
END
$$;


--
-- Name: hint_pending_deliveries(); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.hint_pending_deliveries() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'webhookd'
    AS $$
BEGIN
  INSERT INTO due_destinations (destination_id, due_at)
    SELECT n.destination_id, min(n.next_attempt_at) FROM new_rows n
     WHERE n.claim_token IS NULL AND n.feed_at IS NULL GROUP BY n.destination_id;
  RETURN NULL;
END
$$;


--
-- Name: history_id(bigint); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.history_id(seq bigint) RETURNS bigint
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  SELECT (floor(extract(epoch FROM now()) / 86400)::bigint << 36) | (seq & 68719476735)
$$;


--
-- Name: index_event_subjects(); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.index_event_subjects() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'webhookd'
    AS $$
BEGIN
  INSERT INTO event_subjects (subject_hash, tenant_scope, event_id)
    SELECT DISTINCT sha256(convert_to(s, 'UTF8')), coalesce(NEW.tenant_id, ''), NEW.id
      FROM unnest(NEW.subjects) s;
  RETURN NULL;
END
$$;


--
-- Name: is_valid_event_type(text); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.is_valid_event_type(t text) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $_$ SELECT t ~ '^[A-Za-z0-9._:-]{1,255}$' $_$;


--
-- Name: is_valid_tenant_id(text); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.is_valid_tenant_id(t text) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $_$ SELECT t ~ '^[A-Za-z0-9._:-]{1,128}$' $_$;


--
-- Name: json_depth_exceeds(text, integer); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.json_depth_exceeds(doc text, max_depth integer) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE
    AS $$
DECLARE
  s text := regexp_replace(regexp_replace(doc, '"(\\.|[^"\\])*"', '', 'g'), '[^][{}]', '', 'g');
  depth int := 0;
  before int;
BEGIN
  WHILE s <> '' LOOP
    depth := depth + 1;
    IF depth > max_depth THEN
      RETURN true;
    END IF;
    before := length(s);
    s := regexp_replace(s, '\[\]|\{\}', '', 'g');
    IF length(s) = before THEN
      RETURN false;  -- unbalanced: not JSON, which the caller checks
    END IF;
  END LOOP;
  RETURN false;
END
$$;


--
-- Name: last_event_before(timestamp with time zone); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.last_event_before(cutoff timestamp with time zone) RETURNS bigint
    LANGUAGE plpgsql STABLE
    SET search_path TO 'webhookd', 'pg_temp'
    AS $$
DECLARE
  lo bigint;  -- an event older than the cutoff
  hi bigint;  -- no event past it is sought
  mid bigint;
  probe_id bigint;
  probe_at timestamptz;
BEGIN
  SELECT id, created_at INTO lo, probe_at FROM events ORDER BY id LIMIT 1;
  IF lo IS NULL OR probe_at >= cutoff THEN
    RETURN 0;
  END IF;
  SELECT id INTO hi FROM events ORDER BY id DESC LIMIT 1;
  WHILE lo < hi LOOP
    mid := lo + (hi - lo + 1) / 2;
    SELECT id, created_at INTO probe_id, probe_at FROM events WHERE id >= mid ORDER BY id LIMIT 1;
    IF probe_at < cutoff THEN
      lo := probe_id;
    ELSE
      hi := mid - 1;
    END IF;
  END LOOP;
  RETURN lo;
END
$$;


--
-- Name: latency_histogram(integer[]); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.latency_histogram(durations integer[]) RETURNS integer[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  SELECT array_agg(coalesce(c.n, 0) ORDER BY b.i)
    FROM generate_series(0, 31) b(i)
    LEFT JOIN (SELECT width_bucket(d, '{1,1,2,3,5,7,11,15,22,31,45,63,90,127,181,255,362,511,'
                                      '724,1023,1448,2047,2896,4095,5792,8191,11585,16383,'
                                      '23170,32767,46340}'::integer[]) AS i,
                      count(*)::integer AS n
                 FROM unnest(durations) d GROUP BY 1) c ON c.i = b.i
$$;


--
-- Name: mark_destination_deliveries(); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.mark_destination_deliveries() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'webhookd'
    AS $$
BEGIN
  UPDATE delivery_queue q SET fifo = (NEW.ordering = 'fifo')
   WHERE q.destination_id = NEW.id AND q.fifo <> (NEW.ordering = 'fifo');
  RETURN NULL;
END
$$;


--
-- Name: new_traceparent(); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.new_traceparent() RETURNS text
    LANGUAGE sql
    AS $$
  SELECT '00-' || replace(gen_random_uuid()::text, '-', '') || '-'
         || left(replace(gen_random_uuid()::text, '-', ''), 16) || '-01'
$$;


--
-- Name: payload_jsonb(text); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.payload_jsonb(payload text) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
BEGIN
  RETURN payload::jsonb;
EXCEPTION WHEN OTHERS THEN
  RETURN NULL;
END
$$;


--
-- Name: publish(text, text, text, text, text, text, text, text, text[]); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.publish(type text, payload text, tenant_id text DEFAULT NULL::text, destination_id text DEFAULT NULL::text, idempotency_key text DEFAULT NULL::text, ordering_key text DEFAULT NULL::text, traceparent text DEFAULT NULL::text, tracestate text DEFAULT NULL::text, subjects text[] DEFAULT NULL::text[]) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'webhookd', 'pg_temp'
    AS $_$
DECLARE
  v_type text := publish.type;
  v_tenant text := publish.tenant_id;
  v_target bigint;
  v_hash text;
  v_event bigint;
  v_held record;
  v_keys text[];
  v_deliveries int;
  v_traceparent text := valid_traceparent(publish.traceparent);
  v_tracestate text;
  v_subjects text[];
BEGIN
  -- A tracestate goes with a valid traceparent only, and only as a printable list of at
  -- most 512 bytes; an invalid context is ignored (a fresh trace), never refused.
  IF v_traceparent IS NOT NULL AND char_length(publish.tracestate) <= 512
     AND publish.tracestate ~ '^[ -~]*$' THEN
    v_tracestate := nullif(btrim(publish.tracestate, E' \t'), '');
  END IF;
  v_target := publish_arguments(v_type, payload, v_tenant, publish.destination_id,
                                idempotency_key, publish.ordering_key, publish.subjects);
  -- Each subject once, in the order first given; none is NULL, as an empty list.
  v_subjects := nullif(ARRAY(SELECT s FROM unnest(publish.subjects) WITH ORDINALITY u(s, n)
                              GROUP BY s ORDER BY min(n)), '{}');

  IF idempotency_key IS NOT NULL THEN
    -- The call's arguments stand for the request body (the subjects only when given,
    -- so a call without them hashes as it did before they existed).
    v_hash := encode(sha256(convert_to(
      CASE WHEN v_subjects IS NULL
           THEN json_build_array('sql', v_type, payload, v_tenant, publish.destination_id,
                                 publish.ordering_key)
           ELSE json_build_array('sql', v_type, payload, v_tenant, publish.destination_id,
                                 publish.ordering_key, v_subjects) END::text, 'UTF8')),
      'hex');
    -- Waits for a concurrent holder of the same key, as the API does.
    -- Keys are the event's tenant's: two tenants' producers cannot collide.
    INSERT INTO idempotency_keys AS k (tenant_scope, key, request_hash, event_id)
    VALUES (coalesce(v_tenant, ''), idempotency_key, v_hash, 0)
    ON CONFLICT (tenant_scope, key) DO UPDATE SET request_hash = EXCLUDED.request_hash,
       event_id = 0, created_at = now()
     WHERE k.created_at < now() - interval '24 hours'
    RETURNING k.event_id INTO v_event;
    IF NOT FOUND THEN
      SELECT k.request_hash, k.event_id INTO v_held FROM idempotency_keys k
       WHERE k.tenant_scope = coalesce(v_tenant, '') AND k.key = idempotency_key;
      IF v_held.request_hash <> v_hash THEN
        RAISE EXCEPTION 'Idempotency-Key: was already used with a different request body'
          USING ERRCODE = '22023';
      END IF;
      RETURN 'evt_' || v_held.event_id;
    END IF;
  END IF;

  INSERT INTO events (type, payload, tenant_id, ordering_key, traceparent, tracestate,
                      subjects)
  VALUES (v_type, payload, v_tenant, publish.ordering_key,
          coalesce(v_traceparent, new_traceparent()), v_tracestate, v_subjects)
  RETURNING id INTO v_event;
  IF idempotency_key IS NOT NULL THEN
    UPDATE idempotency_keys k SET event_id = v_event
     WHERE k.tenant_scope = coalesce(v_tenant, '') AND k.key = idempotency_key;
  END IF;

  -- Targeted as store/pg/sql/fan_out_targeted.sql, else fanned out by webhookd.fan_out.
  IF v_target IS NOT NULL THEN
    INSERT INTO deliveries (event_id, destination_id, tenant_id, ordering_key)
    SELECT v_event, d.id, d.tenant_id, publish.ordering_key FROM destinations d
     WHERE d.id = v_target AND d.enabled AND d.deleted_at IS NULL;
  ELSE
    -- The rule of every fan-out (fan_out.sql); the keys in a variable, computed once.
    v_keys := event_type_keys(v_type);
    INSERT INTO deliveries (event_id, destination_id, tenant_id, ordering_key)
    SELECT v_event, d.id, v_tenant, publish.ordering_key
      FROM fan_out(v_tenant, v_keys, publish.payload) d(id)
     ORDER BY d.id;
  END IF;
  GET DIAGNOSTICS v_deliveries = ROW_COUNT;
  -- Delivered to listeners only when the caller's transaction commits; never if it
  -- rolls back. The channel is store/pg/locks.h's kWakeupChannel.
  IF v_deliveries > 0 THEN
    PERFORM pg_notify('webhookd_wakeup', '');
  END IF;
  RETURN 'evt_' || v_event;
END
$_$;


--
-- Name: publish_arguments(text, text, text, text, text, text, text[]); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.publish_arguments(type text, payload text, tenant_id text, destination_id text, idempotency_key text, ordering_key text, subjects text[]) RETURNS bigint
    LANGUAGE plpgsql STABLE
    SET search_path TO 'webhookd', 'pg_temp'
    AS $_$
DECLARE
  v_type text := publish_arguments.type;
  v_tenant text := publish_arguments.tenant_id;
  v_target bigint;
  v_target_tenant text;
  v_doc json;
BEGIN
  IF v_type IS NULL THEN
    RAISE EXCEPTION 'type: is required' USING ERRCODE = '22023';
  ELSIF NOT is_valid_event_type(v_type) THEN
    RAISE EXCEPTION 'type: must be 1-255 characters of A-Z a-z 0-9 . _ : -' USING ERRCODE = '22023';
  ELSIF v_type LIKE 'webhookd.%' THEN
    RAISE EXCEPTION 'type: types starting with "webhookd." are reserved for webhookd''s own events'
      USING ERRCODE = '22023';
  END IF;
  IF (SELECT c.mode FROM event_catalog c) = 'strict'
     AND NOT EXISTS (SELECT 1 FROM event_types t WHERE t.name = v_type) THEN
    RAISE EXCEPTION 'type: is not in the event catalog (WEBHOOKD_EVENT_TYPES is strict)'
      USING ERRCODE = '22023';
  END IF;
  IF payload IS NULL THEN
    RAISE EXCEPTION 'payload: is required' USING ERRCODE = '22023';
  END IF;
  BEGIN
    -- json, not jsonb: it checks the syntax alone, as the API does (jsonb would refuse
    -- \u0000 and fold duplicate keys); the text itself is what is kept.
    v_doc := payload::json;
  EXCEPTION WHEN invalid_text_representation THEN
    RAISE EXCEPTION 'payload: must be a JSON object' USING ERRCODE = '22023';
  END;
  IF json_typeof(v_doc) <> 'object' THEN
    RAISE EXCEPTION 'payload: must be a JSON object' USING ERRCODE = '22023';
  END IF;
  -- The API's limits: its body size (webhookd.max_payload_bytes when the operator set it
  -- for the database, else WEBHOOKD_MAX_PAYLOAD_BYTES' default) and nesting depth.
  IF octet_length(payload) > coalesce(nullif(current_setting('webhookd.max_payload_bytes', true), '')::bigint,
                                      262144) THEN
    RAISE EXCEPTION 'payload: is larger than the largest accepted body (webhookd.max_payload_bytes, 262144 bytes unless set)'
      USING ERRCODE = '22023';
  END IF;
  IF json_depth_exceeds(payload, 64) THEN
    RAISE EXCEPTION 'payload: JSON nested deeper than 64 levels' USING ERRCODE = '22023';
  END IF;
  IF v_tenant IS NOT NULL AND NOT is_valid_tenant_id(v_tenant) THEN
    RAISE EXCEPTION 'tenant_id: must be 1-128 characters of A-Z a-z 0-9 . _ : -'
      USING ERRCODE = '22023';
  END IF;
  IF publish_arguments.ordering_key IS NOT NULL
     AND (char_length(publish_arguments.ordering_key) NOT BETWEEN 1 AND 255
          OR publish_arguments.ordering_key ~ '[\x01-\x1f\x7f]') THEN
    RAISE EXCEPTION 'ordering_key: must be 1-255 characters without control characters'
      USING ERRCODE = '22023';
  END IF;
  IF subjects_problem(publish_arguments.subjects) IS NOT NULL THEN
    RAISE EXCEPTION 'subjects: %', subjects_problem(publish_arguments.subjects)
      USING ERRCODE = '22023';
  END IF;
  IF idempotency_key IS NOT NULL AND idempotency_key !~ '^[!-~]{1,255}$' THEN
    RAISE EXCEPTION 'Idempotency-Key: must be 1-255 visible ASCII characters'
      USING ERRCODE = '22023';
  END IF;
  IF publish_arguments.destination_id IS NOT NULL THEN
    IF publish_arguments.destination_id !~ '^dst_[0-9]{1,18}$' THEN
      RAISE EXCEPTION 'destination_id: no destination with that id' USING ERRCODE = '22023';
    END IF;
    SELECT d.id, d.tenant_id INTO v_target, v_target_tenant FROM destinations d
     WHERE d.id = substr(publish_arguments.destination_id, 5)::bigint AND d.deleted_at IS NULL;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'destination_id: no destination with that id' USING ERRCODE = '22023';
    ELSIF v_target_tenant IS DISTINCT FROM v_tenant THEN
      IF v_tenant IS NOT NULL THEN
        RAISE EXCEPTION 'destination_id: is not a destination of the event''s tenant'
          USING ERRCODE = '22023';
      END IF;
      RAISE EXCEPTION 'destination_id: is a tenant''s destination; the event has no tenant_id'
        USING ERRCODE = '22023';
    END IF;
  END IF;
  RETURN v_target;
END
$_$;


--
-- Name: queue_new_deliveries(); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.queue_new_deliveries() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'webhookd'
    AS $$
BEGIN
  INSERT INTO delivery_queue (id, destination_id, next_attempt_at, fifo, ordering_key,
                              created_at)
    SELECT n.id, n.destination_id, now(), t.id IS NOT NULL, n.ordering_key, n.created_at
      FROM new_rows n
      LEFT JOIN destinations t ON t.id = n.destination_id AND t.ordering = 'fifo'
     WHERE n.status = 'pending' AND NOT n.kept
     ORDER BY n.id;
  RETURN NULL;
END
$$;


--
-- Name: requeue_dead_lettered(bigint[]); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.requeue_dead_lettered(ids bigint[]) RETURNS SETOF bigint
    LANGUAGE sql
    SET search_path TO 'webhookd'
    AS $$
  WITH r AS (
    UPDATE deliveries d
       SET status = 'pending', cycle_attempts = 0, stopped_as = NULL, updated_at = now()
     WHERE d.id = ANY (ids) AND d.status = 'dead_lettered'
    RETURNING d.id, d.destination_id, d.ordering_key, d.created_at)
  INSERT INTO delivery_queue (id, destination_id, next_attempt_at, fifo, ordering_key,
                              created_at)
  SELECT r.id, r.destination_id, now(), t.ordering = 'fifo', r.ordering_key, r.created_at
    FROM r JOIN destinations t ON t.id = r.destination_id
  RETURNING id
$$;


--
-- Name: subjects_problem(text[]); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.subjects_problem(subjects text[]) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$
SELECT CASE
  WHEN subjects IS NULL THEN NULL
  WHEN array_ndims(subjects) > 1 OR cardinality(subjects) > 16
    OR EXISTS (SELECT 1 FROM unnest(subjects) s
                WHERE s IS NULL OR octet_length(s) NOT BETWEEN 1 AND 256
                   OR s ~ '[\x01-\x1f\x7f-\x9f]')
  THEN 'must be at most 16 strings, each 1-256 bytes of UTF-8 without control characters'
END
$$;


--
-- Name: valid_traceparent(text); Type: FUNCTION; Schema: webhookd; Owner: -
--

CREATE FUNCTION webhookd.valid_traceparent(tp text) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $_$
  SELECT '00-' || substr(t, 4, 50)
         || CASE WHEN (('x' || substr(t, 54, 2))::bit(8) & B'00000001') = B'00000001'
                 THEN '01' ELSE '00' END
    FROM (SELECT btrim(tp, E' \t') AS t) s
   WHERE t ~ '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}(-.*)?$'
     AND left(t, 2) <> 'ff'
     AND (left(t, 2) <> '00' OR length(t) = 55)
     AND substr(t, 4, 32) <> repeat('0', 32)
     AND substr(t, 37, 16) <> repeat('0', 16)
$_$;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: api_keys; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.api_keys (
    id bigint NOT NULL,
    name text DEFAULT ''::text NOT NULL,
    role text NOT NULL,
    key_hash text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    revoked_at timestamp with time zone,
    tenant_id text,
    expires_at timestamp with time zone,
    CONSTRAINT api_keys_role_check CHECK ((role = ANY (ARRAY['publisher'::text, 'admin'::text, 'tenant'::text]))),
    CONSTRAINT api_keys_tenant_check CHECK (((role = 'tenant'::text) = (tenant_id IS NOT NULL))),
    CONSTRAINT api_keys_tenant_id_check CHECK ((tenant_id ~ '^[A-Za-z0-9._:-]{1,128}$'::text))
);


--
-- Name: api_keys_id_seq; Type: SEQUENCE; Schema: webhookd; Owner: -
--

ALTER TABLE webhookd.api_keys ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME webhookd.api_keys_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: attempts; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.attempts (
    delivery_id bigint NOT NULL,
    attempt_number integer NOT NULL,
    started_at timestamp with time zone NOT NULL,
    duration_ms integer NOT NULL,
    status_code integer,
    error text,
    response_body text DEFAULT ''::text NOT NULL,
    outcome text NOT NULL,
    kept boolean DEFAULT false NOT NULL,
    CONSTRAINT attempts_outcome_check CHECK ((outcome = ANY (ARRAY['success'::text, 'retryable'::text, 'permanent'::text, 'skipped'::text])))
)
PARTITION BY LIST (kept);


--
-- Name: attempts_days; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.attempts_days (
    delivery_id bigint NOT NULL,
    attempt_number integer NOT NULL,
    started_at timestamp with time zone NOT NULL,
    duration_ms integer NOT NULL,
    status_code integer,
    error text,
    response_body text DEFAULT ''::text NOT NULL,
    outcome text NOT NULL,
    kept boolean DEFAULT false NOT NULL,
    CONSTRAINT attempts_outcome_check CHECK ((outcome = ANY (ARRAY['success'::text, 'retryable'::text, 'permanent'::text, 'skipped'::text])))
)
PARTITION BY RANGE (delivery_id);


--
-- Name: attempts_kept; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.attempts_kept (
    delivery_id bigint NOT NULL,
    attempt_number integer NOT NULL,
    started_at timestamp with time zone NOT NULL,
    duration_ms integer NOT NULL,
    status_code integer,
    error text,
    response_body text DEFAULT ''::text NOT NULL,
    outcome text NOT NULL,
    kept boolean DEFAULT false NOT NULL,
    CONSTRAINT attempts_outcome_check CHECK ((outcome = ANY (ARRAY['success'::text, 'retryable'::text, 'permanent'::text, 'skipped'::text])))
);


--
-- Name: dead_letters; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.dead_letters (
    id bigint NOT NULL,
    delivery_id bigint NOT NULL,
    event_id bigint NOT NULL,
    destination_id bigint NOT NULL,
    reason text NOT NULL,
    attempt_count integer NOT NULL,
    last_status_code integer,
    last_error text,
    dead_lettered_at timestamp with time zone DEFAULT now() NOT NULL,
    replayed_at timestamp with time zone,
    tenant_id text,
    dismissed_at timestamp with time zone,
    kept boolean DEFAULT false NOT NULL,
    CONSTRAINT dead_letters_reason_check CHECK ((reason = ANY (ARRAY['exhausted'::text, 'permanent_failure'::text])))
)
PARTITION BY LIST (kept);


--
-- Name: dead_letters_id_seq; Type: SEQUENCE; Schema: webhookd; Owner: -
--

CREATE SEQUENCE webhookd.dead_letters_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: dead_letters_id_seq; Type: SEQUENCE OWNED BY; Schema: webhookd; Owner: -
--

ALTER SEQUENCE webhookd.dead_letters_id_seq OWNED BY webhookd.dead_letters.id;


--
-- Name: dead_letters_days; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.dead_letters_days (
    id bigint DEFAULT nextval('webhookd.dead_letters_id_seq'::regclass) NOT NULL,
    delivery_id bigint NOT NULL,
    event_id bigint NOT NULL,
    destination_id bigint NOT NULL,
    reason text NOT NULL,
    attempt_count integer NOT NULL,
    last_status_code integer,
    last_error text,
    dead_lettered_at timestamp with time zone DEFAULT now() NOT NULL,
    replayed_at timestamp with time zone,
    tenant_id text,
    dismissed_at timestamp with time zone,
    kept boolean DEFAULT false NOT NULL,
    CONSTRAINT dead_letters_reason_check CHECK ((reason = ANY (ARRAY['exhausted'::text, 'permanent_failure'::text])))
)
PARTITION BY RANGE (delivery_id);


--
-- Name: dead_letters_kept; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.dead_letters_kept (
    id bigint DEFAULT nextval('webhookd.dead_letters_id_seq'::regclass) NOT NULL,
    delivery_id bigint NOT NULL,
    event_id bigint NOT NULL,
    destination_id bigint NOT NULL,
    reason text NOT NULL,
    attempt_count integer NOT NULL,
    last_status_code integer,
    last_error text,
    dead_lettered_at timestamp with time zone DEFAULT now() NOT NULL,
    replayed_at timestamp with time zone,
    tenant_id text,
    dismissed_at timestamp with time zone,
    kept boolean DEFAULT false NOT NULL,
    CONSTRAINT dead_letters_reason_check CHECK ((reason = ANY (ARRAY['exhausted'::text, 'permanent_failure'::text])))
);


--
-- Name: deliveries; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.deliveries (
    id bigint NOT NULL,
    event_id bigint NOT NULL,
    destination_id bigint NOT NULL,
    status text DEFAULT 'pending'::text NOT NULL,
    attempt_count integer DEFAULT 0 NOT NULL,
    cycle_attempts integer DEFAULT 0 NOT NULL,
    last_attempt_at timestamp with time zone,
    last_status_code integer,
    last_error text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    tenant_id text,
    ordering_key text,
    stopped_as text,
    kept boolean DEFAULT false NOT NULL,
    CONSTRAINT deliveries_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'in_flight'::text, 'succeeded'::text, 'dead_lettered'::text, 'cancelled'::text]))),
    CONSTRAINT deliveries_stopped_as_check CHECK (((stopped_as = ANY (ARRAY['dead_lettered'::text, 'cancelled'::text])) AND (stopped_as = status)))
)
PARTITION BY LIST (kept);


--
-- Name: deliveries_id_seq; Type: SEQUENCE; Schema: webhookd; Owner: -
--

CREATE SEQUENCE webhookd.deliveries_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: deliveries_id_seq; Type: SEQUENCE OWNED BY; Schema: webhookd; Owner: -
--

ALTER SEQUENCE webhookd.deliveries_id_seq OWNED BY webhookd.deliveries.id;


--
-- Name: deliveries_days; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.deliveries_days (
    id bigint DEFAULT webhookd.history_id(nextval('webhookd.deliveries_id_seq'::regclass)) NOT NULL,
    event_id bigint NOT NULL,
    destination_id bigint NOT NULL,
    status text DEFAULT 'pending'::text NOT NULL,
    attempt_count integer DEFAULT 0 NOT NULL,
    cycle_attempts integer DEFAULT 0 NOT NULL,
    last_attempt_at timestamp with time zone,
    last_status_code integer,
    last_error text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    tenant_id text,
    ordering_key text,
    stopped_as text,
    kept boolean DEFAULT false NOT NULL,
    CONSTRAINT deliveries_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'in_flight'::text, 'succeeded'::text, 'dead_lettered'::text, 'cancelled'::text]))),
    CONSTRAINT deliveries_stopped_as_check CHECK (((stopped_as = ANY (ARRAY['dead_lettered'::text, 'cancelled'::text])) AND (stopped_as = status)))
)
PARTITION BY RANGE (id);


--
-- Name: deliveries_kept; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.deliveries_kept (
    id bigint DEFAULT webhookd.history_id(nextval('webhookd.deliveries_id_seq'::regclass)) NOT NULL,
    event_id bigint NOT NULL,
    destination_id bigint NOT NULL,
    status text DEFAULT 'pending'::text NOT NULL,
    attempt_count integer DEFAULT 0 NOT NULL,
    cycle_attempts integer DEFAULT 0 NOT NULL,
    last_attempt_at timestamp with time zone,
    last_status_code integer,
    last_error text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    tenant_id text,
    ordering_key text,
    stopped_as text,
    kept boolean DEFAULT false NOT NULL,
    CONSTRAINT deliveries_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'in_flight'::text, 'succeeded'::text, 'dead_lettered'::text, 'cancelled'::text]))),
    CONSTRAINT deliveries_stopped_as_check CHECK (((stopped_as = ANY (ARRAY['dead_lettered'::text, 'cancelled'::text])) AND (stopped_as = status)))
)
WITH (fillfactor='50');


--
-- Name: delivery_queue; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.delivery_queue (
    id bigint NOT NULL,
    destination_id bigint NOT NULL,
    next_attempt_at timestamp with time zone NOT NULL,
    lease_until timestamp with time zone,
    claim_token bigint,
    fifo boolean DEFAULT false NOT NULL,
    ordering_key text,
    created_at timestamp with time zone NOT NULL,
    feed_at timestamp with time zone,
    CONSTRAINT delivery_queue_lease_while_in_flight CHECK (((claim_token IS NULL) = (lease_until IS NULL)))
)
WITH (fillfactor='70', autovacuum_vacuum_scale_factor='0', autovacuum_vacuum_threshold='5000', autovacuum_vacuum_insert_scale_factor='0', autovacuum_vacuum_insert_threshold='5000', autovacuum_vacuum_cost_delay='0', autovacuum_analyze_scale_factor='0.05');


--
-- Name: delivery_rows; Type: VIEW; Schema: webhookd; Owner: -
--

CREATE VIEW webhookd.delivery_rows AS
 SELECT d.id,
    d.event_id,
    d.destination_id,
        CASE
            WHEN (q.claim_token IS NOT NULL) THEN 'in_flight'::text
            ELSE d.status
        END AS status,
    d.attempt_count,
    COALESCE(q.feed_at, q.next_attempt_at) AS next_attempt_at,
    d.last_attempt_at,
    d.last_status_code,
    d.last_error,
    d.created_at,
    d.updated_at,
    d.tenant_id,
    d.ordering_key,
        CASE
            WHEN (q.fifo AND (q.claim_token IS NULL)) THEN webhookd.fifo_blocked_by(d.id, d.destination_id, d.ordering_key)
            ELSE NULL::bigint
        END AS blocked_by
   FROM (webhookd.deliveries d
     LEFT JOIN webhookd.delivery_queue q ON ((q.id = d.id)));


--
-- Name: destination_secrets; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.destination_secrets (
    destination_id bigint NOT NULL,
    secret text NOT NULL,
    retired_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL
);


--
-- Name: destination_stats; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.destination_stats (
    destination_id bigint NOT NULL,
    minute timestamp with time zone NOT NULL,
    slot smallint NOT NULL,
    succeeded integer DEFAULT 0 NOT NULL,
    retryable integer DEFAULT 0 NOT NULL,
    permanent integer DEFAULT 0 NOT NULL,
    dead_lettered integer DEFAULT 0 NOT NULL,
    latency integer[] NOT NULL
)
PARTITION BY RANGE (minute);


--
-- Name: destination_stats_hours; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.destination_stats_hours (
    destination_id bigint NOT NULL,
    hour timestamp with time zone NOT NULL,
    slot smallint NOT NULL,
    succeeded integer DEFAULT 0 NOT NULL,
    retryable integer DEFAULT 0 NOT NULL,
    permanent integer DEFAULT 0 NOT NULL,
    dead_lettered integer DEFAULT 0 NOT NULL,
    latency integer[] NOT NULL
)
PARTITION BY RANGE (hour);


--
-- Name: destinations; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.destinations (
    id bigint NOT NULL,
    url text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    event_types text[] DEFAULT '{}'::text[] NOT NULL,
    secret text NOT NULL,
    headers jsonb DEFAULT '{}'::jsonb NOT NULL,
    enabled boolean DEFAULT true NOT NULL,
    max_in_flight integer,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    deleted_at timestamp with time zone,
    tenant_id text,
    rate_limit integer,
    disabled_reason text,
    circuit text DEFAULT 'closed'::text NOT NULL,
    consecutive_failures integer DEFAULT 0 NOT NULL,
    failing_since timestamp with time zone,
    next_probe_at timestamp with time zone,
    cooldown_us bigint,
    effective_max_in_flight integer,
    success_run integer DEFAULT 0 NOT NULL,
    ramping boolean DEFAULT false NOT NULL,
    tokens double precision DEFAULT 0 NOT NULL,
    tokens_at timestamp with time zone,
    ordering text DEFAULT 'none'::text NOT NULL,
    on_dead_letter text DEFAULT 'continue'::text NOT NULL,
    filter text,
    filter_path jsonpath GENERATED ALWAYS AS ((filter)::jsonpath) STORED,
    tls_client_certificate text,
    tls_client_key text,
    tls_ca_certificate text,
    auth_token_url text,
    auth_client_id text,
    auth_client_secret text,
    auth_scope text,
    broker jsonb,
    broker_username text,
    broker_password text,
    fallback text,
    CONSTRAINT destinations_auth_whole CHECK ((((auth_token_url IS NULL) = (auth_client_id IS NULL)) AND ((auth_token_url IS NULL) = (auth_client_secret IS NULL)) AND ((auth_scope IS NULL) OR (auth_token_url IS NOT NULL)))),
    CONSTRAINT destinations_broker_credentials CHECK (((broker IS NOT NULL) OR ((broker_username IS NULL) AND (broker_password IS NULL)))),
    CONSTRAINT destinations_broker_object CHECK (((broker IS NULL) OR (jsonb_typeof(broker) = 'object'::text))),
    CONSTRAINT destinations_circuit_check CHECK ((circuit = ANY (ARRAY['closed'::text, 'open'::text, 'half_open'::text]))),
    CONSTRAINT destinations_disabled_reason_check CHECK ((disabled_reason = ANY (ARRAY['manual'::text, 'gone'::text, 'failing'::text]))),
    CONSTRAINT destinations_effective_max_in_flight_check CHECK ((effective_max_in_flight > 0)),
    CONSTRAINT destinations_fallback_check CHECK ((fallback = 'feed'::text)),
    CONSTRAINT destinations_max_in_flight_check CHECK ((max_in_flight > 0)),
    CONSTRAINT destinations_on_dead_letter_check CHECK ((on_dead_letter = ANY (ARRAY['continue'::text, 'block'::text]))),
    CONSTRAINT destinations_ordering_check CHECK ((ordering = ANY (ARRAY['none'::text, 'fifo'::text]))),
    CONSTRAINT destinations_rate_limit_check CHECK (((rate_limit >= 1) AND (rate_limit <= 100000))),
    CONSTRAINT destinations_tenant_id_check CHECK ((tenant_id ~ '^[A-Za-z0-9._:-]{1,128}$'::text)),
    CONSTRAINT destinations_tls_pair CHECK (((tls_client_certificate IS NULL) = (tls_client_key IS NULL)))
)
WITH (fillfactor='70');


--
-- Name: destinations_id_seq; Type: SEQUENCE; Schema: webhookd; Owner: -
--

ALTER TABLE webhookd.destinations ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME webhookd.destinations_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: due_destinations; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.due_destinations (
    destination_id bigint NOT NULL,
    due_at timestamp with time zone NOT NULL
)
WITH (autovacuum_vacuum_scale_factor='0', autovacuum_vacuum_threshold='10000', autovacuum_vacuum_cost_delay='0');


--
-- Name: erasures; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.erasures (
    id bigint NOT NULL,
    subject_hash bytea NOT NULL,
    tenant_id text,
    status text DEFAULT 'running'::text NOT NULL,
    events integer DEFAULT 0 NOT NULL,
    cancelled_deliveries integer DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    CONSTRAINT erasures_finished_when_done CHECK (((status = 'done'::text) = (finished_at IS NOT NULL))),
    CONSTRAINT erasures_status_check CHECK ((status = ANY (ARRAY['running'::text, 'done'::text])))
);


--
-- Name: erasures_id_seq; Type: SEQUENCE; Schema: webhookd; Owner: -
--

ALTER TABLE webhookd.erasures ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME webhookd.erasures_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: event_catalog; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.event_catalog (
    singleton boolean DEFAULT true NOT NULL,
    generation bigint DEFAULT 1 NOT NULL,
    mode text DEFAULT 'open'::text NOT NULL,
    CONSTRAINT event_catalog_mode_check CHECK ((mode = ANY (ARRAY['open'::text, 'strict'::text]))),
    CONSTRAINT event_catalog_singleton_check CHECK (singleton)
);


--
-- Name: event_subjects; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.event_subjects (
    subject_hash bytea NOT NULL,
    tenant_scope text NOT NULL,
    event_id bigint NOT NULL,
    kept boolean DEFAULT false NOT NULL
)
PARTITION BY LIST (kept);


--
-- Name: event_subjects_days; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.event_subjects_days (
    subject_hash bytea NOT NULL,
    tenant_scope text NOT NULL,
    event_id bigint NOT NULL,
    kept boolean DEFAULT false NOT NULL
)
PARTITION BY RANGE (event_id);


--
-- Name: event_subjects_kept; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.event_subjects_kept (
    subject_hash bytea NOT NULL,
    tenant_scope text NOT NULL,
    event_id bigint NOT NULL,
    kept boolean DEFAULT false NOT NULL
);


--
-- Name: event_types; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.event_types (
    name text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    schema json,
    examples json DEFAULT '[]'::json NOT NULL,
    deprecated boolean DEFAULT false NOT NULL,
    builtin boolean DEFAULT false NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: events; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.events (
    id bigint NOT NULL,
    type text NOT NULL,
    payload text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    tenant_id text,
    ordering_key text,
    traceparent text DEFAULT webhookd.new_traceparent(),
    tracestate text,
    subjects text[],
    erased_at timestamp with time zone,
    kept boolean DEFAULT false NOT NULL,
    source_id bigint,
    source_provider text,
    dedupe_key text,
    CONSTRAINT events_payload_unless_erased CHECK (((payload IS NULL) = (erased_at IS NOT NULL))),
    CONSTRAINT events_tenant_id_check CHECK ((tenant_id ~ '^[A-Za-z0-9._:-]{1,128}$'::text))
)
PARTITION BY LIST (kept);


--
-- Name: events_id_seq; Type: SEQUENCE; Schema: webhookd; Owner: -
--

CREATE SEQUENCE webhookd.events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: events_id_seq; Type: SEQUENCE OWNED BY; Schema: webhookd; Owner: -
--

ALTER SEQUENCE webhookd.events_id_seq OWNED BY webhookd.events.id;


--
-- Name: events_days; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.events_days (
    id bigint DEFAULT webhookd.history_id(nextval('webhookd.events_id_seq'::regclass)) NOT NULL,
    type text NOT NULL,
    payload text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    tenant_id text,
    ordering_key text,
    traceparent text DEFAULT webhookd.new_traceparent(),
    tracestate text,
    subjects text[],
    erased_at timestamp with time zone,
    kept boolean DEFAULT false NOT NULL,
    source_id bigint,
    source_provider text,
    dedupe_key text,
    CONSTRAINT events_payload_unless_erased CHECK (((payload IS NULL) = (erased_at IS NOT NULL))),
    CONSTRAINT events_tenant_id_check CHECK ((tenant_id ~ '^[A-Za-z0-9._:-]{1,128}$'::text))
)
PARTITION BY RANGE (id);


--
-- Name: events_kept; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.events_kept (
    id bigint DEFAULT webhookd.history_id(nextval('webhookd.events_id_seq'::regclass)) NOT NULL,
    type text NOT NULL,
    payload text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    tenant_id text,
    ordering_key text,
    traceparent text DEFAULT webhookd.new_traceparent(),
    tracestate text,
    subjects text[],
    erased_at timestamp with time zone,
    kept boolean DEFAULT false NOT NULL,
    source_id bigint,
    source_provider text,
    dedupe_key text,
    CONSTRAINT events_payload_unless_erased CHECK (((payload IS NULL) = (erased_at IS NOT NULL))),
    CONSTRAINT events_tenant_id_check CHECK ((tenant_id ~ '^[A-Za-z0-9._:-]{1,128}$'::text))
);


--
-- Name: fifo_turns; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.fifo_turns (
    destination_id bigint NOT NULL,
    last_key text NOT NULL
);


--
-- Name: history_days; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.history_days (
    day date NOT NULL,
    event_from bigint,
    event_to bigint NOT NULL,
    delivery_from bigint,
    delivery_to bigint NOT NULL,
    detaching_since timestamp with time zone
);


--
-- Name: idempotency_keys; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.idempotency_keys (
    key text NOT NULL,
    request_hash text NOT NULL,
    event_id bigint NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    tenant_scope text DEFAULT ''::text NOT NULL
);


--
-- Name: queue_counts; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.queue_counts (
    created_minute timestamp with time zone NOT NULL,
    pending bigint NOT NULL,
    in_flight bigint NOT NULL
)
WITH (autovacuum_vacuum_scale_factor='0', autovacuum_vacuum_threshold='1000', autovacuum_vacuum_insert_scale_factor='0', autovacuum_vacuum_insert_threshold='1000');


--
-- Name: queue_counts_by_minute; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.queue_counts_by_minute (
    created_minute timestamp with time zone NOT NULL,
    pending bigint NOT NULL,
    in_flight bigint NOT NULL
);


--
-- Name: recoveries; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.recoveries (
    id bigint NOT NULL,
    destination_id bigint NOT NULL,
    tenant_id text,
    since timestamp with time zone NOT NULL,
    until timestamp with time zone NOT NULL,
    status text DEFAULT 'running'::text NOT NULL,
    replayed bigint DEFAULT 0 NOT NULL,
    after_id bigint DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    pass smallint DEFAULT 1 NOT NULL,
    CONSTRAINT recoveries_finished_when_done CHECK (((status = 'done'::text) = (finished_at IS NOT NULL))),
    CONSTRAINT recoveries_pass_check CHECK ((pass = ANY (ARRAY[1, 2]))),
    CONSTRAINT recoveries_status_check CHECK ((status = ANY (ARRAY['running'::text, 'done'::text]))),
    CONSTRAINT recoveries_window_check CHECK ((since < until))
);


--
-- Name: recoveries_id_seq; Type: SEQUENCE; Schema: webhookd; Owner: -
--

ALTER TABLE webhookd.recoveries ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME webhookd.recoveries_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: schema_definitions; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.schema_definitions (
    hash text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: schema_migrations; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.schema_migrations (
    version text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: source_generation; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.source_generation (
    singleton boolean DEFAULT true NOT NULL,
    generation bigint DEFAULT 1 NOT NULL,
    CONSTRAINT source_generation_singleton_check CHECK (singleton)
);


--
-- Name: source_keys; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.source_keys (
    source_id bigint NOT NULL,
    dedupe_key text NOT NULL,
    event_id bigint NOT NULL
);


--
-- Name: sources; Type: TABLE; Schema: webhookd; Owner: -
--

CREATE TABLE webhookd.sources (
    id bigint NOT NULL,
    tenant_id text,
    provider text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    type_prefix text DEFAULT ''::text NOT NULL,
    tolerance_ms bigint NOT NULL,
    url text DEFAULT ''::text NOT NULL,
    hmac_header text DEFAULT ''::text NOT NULL,
    hmac_algorithm text DEFAULT 'sha256'::text NOT NULL,
    hmac_encoding text DEFAULT 'hex'::text NOT NULL,
    hmac_prefix text DEFAULT ''::text NOT NULL,
    event_type text DEFAULT ''::text NOT NULL,
    dedupe_header text DEFAULT ''::text NOT NULL,
    secret text NOT NULL,
    previous_secret text,
    previous_valid_until timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    deleted_at timestamp with time zone,
    CONSTRAINT sources_hmac_algorithm_check CHECK ((hmac_algorithm = ANY (ARRAY['sha1'::text, 'sha256'::text, 'sha512'::text]))),
    CONSTRAINT sources_hmac_encoding_check CHECK ((hmac_encoding = ANY (ARRAY['hex'::text, 'base64'::text]))),
    CONSTRAINT sources_previous_secret_check CHECK (((previous_secret IS NULL) = (previous_valid_until IS NULL))),
    CONSTRAINT sources_provider_check CHECK ((provider = ANY (ARRAY['stripe'::text, 'github'::text, 'shopify'::text, 'slack'::text, 'twilio'::text, 'standard-webhooks'::text, 'hmac'::text]))),
    CONSTRAINT sources_tenant_id_check CHECK ((tenant_id ~ '^[A-Za-z0-9._:-]{1,128}$'::text)),
    CONSTRAINT sources_tolerance_check CHECK (((tolerance_ms >= 0) AND (tolerance_ms <= 3600000)))
);


--
-- Name: sources_id_seq; Type: SEQUENCE; Schema: webhookd; Owner: -
--

ALTER TABLE webhookd.sources ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME webhookd.sources_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: attempts_days; Type: TABLE ATTACH; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.attempts ATTACH PARTITION webhookd.attempts_days FOR VALUES IN (false);


--
-- Name: attempts_kept; Type: TABLE ATTACH; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.attempts ATTACH PARTITION webhookd.attempts_kept FOR VALUES IN (true);


--
-- Name: dead_letters_days; Type: TABLE ATTACH; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.dead_letters ATTACH PARTITION webhookd.dead_letters_days FOR VALUES IN (false);


--
-- Name: dead_letters_kept; Type: TABLE ATTACH; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.dead_letters ATTACH PARTITION webhookd.dead_letters_kept FOR VALUES IN (true);


--
-- Name: deliveries_days; Type: TABLE ATTACH; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.deliveries ATTACH PARTITION webhookd.deliveries_days FOR VALUES IN (false);


--
-- Name: deliveries_kept; Type: TABLE ATTACH; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.deliveries ATTACH PARTITION webhookd.deliveries_kept FOR VALUES IN (true);


--
-- Name: event_subjects_days; Type: TABLE ATTACH; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.event_subjects ATTACH PARTITION webhookd.event_subjects_days FOR VALUES IN (false);


--
-- Name: event_subjects_kept; Type: TABLE ATTACH; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.event_subjects ATTACH PARTITION webhookd.event_subjects_kept FOR VALUES IN (true);


--
-- Name: events_days; Type: TABLE ATTACH; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.events ATTACH PARTITION webhookd.events_days FOR VALUES IN (false);


--
-- Name: events_kept; Type: TABLE ATTACH; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.events ATTACH PARTITION webhookd.events_kept FOR VALUES IN (true);


--
-- Name: dead_letters id; Type: DEFAULT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.dead_letters ALTER COLUMN id SET DEFAULT nextval('webhookd.dead_letters_id_seq'::regclass);


--
-- Name: deliveries id; Type: DEFAULT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.deliveries ALTER COLUMN id SET DEFAULT webhookd.history_id(nextval('webhookd.deliveries_id_seq'::regclass));


--
-- Name: events id; Type: DEFAULT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.events ALTER COLUMN id SET DEFAULT webhookd.history_id(nextval('webhookd.events_id_seq'::regclass));


--
-- Name: api_keys api_keys_key_hash_key; Type: CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.api_keys
    ADD CONSTRAINT api_keys_key_hash_key UNIQUE (key_hash);


--
-- Name: api_keys api_keys_pkey; Type: CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.api_keys
    ADD CONSTRAINT api_keys_pkey PRIMARY KEY (id);


--
-- Name: attempts attempts_pkey; Type: CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.attempts
    ADD CONSTRAINT attempts_pkey PRIMARY KEY (delivery_id, attempt_number, kept);


--
-- Name: attempts_days attempts_days_pkey; Type: CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.attempts_days
    ADD CONSTRAINT attempts_days_pkey PRIMARY KEY (delivery_id, attempt_number, kept);


--
-- Name: attempts_kept attempts_kept_pkey; Type: CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.attempts_kept
    ADD CONSTRAINT attempts_kept_pkey PRIMARY KEY (delivery_id, attempt_number, kept);


--
-- Name: dead_letters dead_letters_pkey; Type: CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.dead_letters
    ADD CONSTRAINT dead_letters_pkey PRIMARY KEY (id, delivery_id, kept);


--
-- Name: dead_letters_days dead_letters_days_pkey; Type: CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.dead_letters_days
    ADD CONSTRAINT dead_letters_days_pkey PRIMARY KEY (id, delivery_id, kept);


--
-- Name: dead_letters_kept dead_letters_kept_pkey; Type: CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.dead_letters_kept
    ADD CONSTRAINT dead_letters_kept_pkey PRIMARY KEY (id, delivery_id, kept);


--
-- Name: deliveries deliveries_pkey; Type: CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.deliveries
    ADD CONSTRAINT deliveries_pkey PRIMARY KEY (id, kept);


--
-- Name: deliveries_days deliveries_days_pkey; Type: CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.deliveries_days
    ADD CONSTRAINT deliveries_days_pkey PRIMARY KEY (id, kept);


--
-- Name: deliveries_kept deliveries_kept_pkey; Type: CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.deliveries_kept
    ADD CONSTRAINT deliveries_kept_pkey PRIMARY KEY (id, kept);


--
-- Name: delivery_queue delivery_queue_pkey; Type: CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.delivery_queue
    ADD CONSTRAINT delivery_queue_pkey PRIMARY KEY (id);


--
-- Name: destination_stats_hours destination_stats_hours_pkey; Type: CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.destination_stats_hours
    ADD CONSTRAINT destination_stats_hours_pkey PRIMARY KEY (destination_id, hour, slot);


--
-- Name: destination_stats destination_stats_pkey; Type: CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.destination_stats
    ADD CONSTRAINT destination_stats_pkey PRIMARY KEY (destination_id, minute, slot);


--
-- Name: destinations destinations_pkey; Type: CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.destinations
    ADD CONSTRAINT destinations_pkey PRIMARY KEY (id);


--
-- Name: erasures erasures_pkey; Type: CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.erasures
    ADD CONSTRAINT erasures_pkey PRIMARY KEY (id);


--
-- Name: event_catalog event_catalog_pkey; Type: CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.event_catalog
    ADD CONSTRAINT event_catalog_pkey PRIMARY KEY (singleton);


--
-- Name: event_subjects event_subjects_pkey; Type: CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.event_subjects
    ADD CONSTRAINT event_subjects_pkey PRIMARY KEY (subject_hash, tenant_scope, event_id, kept);


--
-- Name: event_subjects_days event_subjects_days_pkey; Type: CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.event_subjects_days
    ADD CONSTRAINT event_subjects_days_pkey PRIMARY KEY (subject_hash, tenant_scope, event_id, kept);


--
-- Name: event_subjects_kept event_subjects_kept_pkey; Type: CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.event_subjects_kept
    ADD CONSTRAINT event_subjects_kept_pkey PRIMARY KEY (subject_hash, tenant_scope, event_id, kept);


--
-- Name: event_types event_types_pkey; Type: CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.event_types
    ADD CONSTRAINT event_types_pkey PRIMARY KEY (name);


--
-- Name: events events_pkey; Type: CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.events
    ADD CONSTRAINT events_pkey PRIMARY KEY (id, kept);


--
-- Name: events_days events_days_pkey; Type: CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.events_days
    ADD CONSTRAINT events_days_pkey PRIMARY KEY (id, kept);


--
-- Name: events_kept events_kept_pkey; Type: CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.events_kept
    ADD CONSTRAINT events_kept_pkey PRIMARY KEY (id, kept);


--
-- Name: fifo_turns fifo_turns_pkey; Type: CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.fifo_turns
    ADD CONSTRAINT fifo_turns_pkey PRIMARY KEY (destination_id);


--
-- Name: history_days history_days_pkey; Type: CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.history_days
    ADD CONSTRAINT history_days_pkey PRIMARY KEY (day);


--
-- Name: idempotency_keys idempotency_keys_pkey; Type: CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.idempotency_keys
    ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (tenant_scope, key);


--
-- Name: queue_counts_by_minute queue_counts_by_minute_pkey; Type: CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.queue_counts_by_minute
    ADD CONSTRAINT queue_counts_by_minute_pkey PRIMARY KEY (created_minute);


--
-- Name: recoveries recoveries_pkey; Type: CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.recoveries
    ADD CONSTRAINT recoveries_pkey PRIMARY KEY (id);


--
-- Name: schema_definitions schema_definitions_pkey; Type: CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.schema_definitions
    ADD CONSTRAINT schema_definitions_pkey PRIMARY KEY (hash);


--
-- Name: schema_migrations schema_migrations_pkey; Type: CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);


--
-- Name: source_generation source_generation_pkey; Type: CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.source_generation
    ADD CONSTRAINT source_generation_pkey PRIMARY KEY (singleton);


--
-- Name: source_keys source_keys_pkey; Type: CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.source_keys
    ADD CONSTRAINT source_keys_pkey PRIMARY KEY (source_id, dedupe_key);


--
-- Name: sources sources_pkey; Type: CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.sources
    ADD CONSTRAINT sources_pkey PRIMARY KEY (id);


--
-- Name: attempts_succeeded; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX attempts_succeeded ON ONLY webhookd.attempts USING btree (delivery_id) WHERE (outcome = 'success'::text);


--
-- Name: attempts_days_delivery_id_idx; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX attempts_days_delivery_id_idx ON ONLY webhookd.attempts_days USING btree (delivery_id) WHERE (outcome = 'success'::text);


--
-- Name: attempts_started; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX attempts_started ON ONLY webhookd.attempts USING brin (started_at);


--
-- Name: attempts_days_started_at_idx; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX attempts_days_started_at_idx ON ONLY webhookd.attempts_days USING brin (started_at);


--
-- Name: attempts_kept_delivery_id_idx; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX attempts_kept_delivery_id_idx ON webhookd.attempts_kept USING btree (delivery_id) WHERE (outcome = 'success'::text);


--
-- Name: attempts_kept_started_at_idx; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX attempts_kept_started_at_idx ON webhookd.attempts_kept USING brin (started_at);


--
-- Name: dead_letters_unreplayed; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX dead_letters_unreplayed ON ONLY webhookd.dead_letters USING btree (dead_lettered_at) WHERE (replayed_at IS NULL);


--
-- Name: dead_letters_days_dead_lettered_at_idx; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX dead_letters_days_dead_lettered_at_idx ON ONLY webhookd.dead_letters_days USING btree (dead_lettered_at) WHERE (replayed_at IS NULL);


--
-- Name: dead_letters_dead_lettered; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX dead_letters_dead_lettered ON ONLY webhookd.dead_letters USING brin (dead_lettered_at);


--
-- Name: dead_letters_days_dead_lettered_at_idx1; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX dead_letters_days_dead_lettered_at_idx1 ON ONLY webhookd.dead_letters_days USING brin (dead_lettered_at);


--
-- Name: dead_letters_delivery; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX dead_letters_delivery ON ONLY webhookd.dead_letters USING btree (delivery_id);


--
-- Name: dead_letters_days_delivery_id_idx; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX dead_letters_days_delivery_id_idx ON ONLY webhookd.dead_letters_days USING btree (delivery_id);


--
-- Name: dead_letters_open; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX dead_letters_open ON ONLY webhookd.dead_letters USING btree (destination_id, delivery_id) WHERE ((replayed_at IS NULL) AND (dismissed_at IS NULL));


--
-- Name: dead_letters_days_destination_id_delivery_id_idx; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX dead_letters_days_destination_id_delivery_id_idx ON ONLY webhookd.dead_letters_days USING btree (destination_id, delivery_id) WHERE ((replayed_at IS NULL) AND (dismissed_at IS NULL));


--
-- Name: dead_letters_destination; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX dead_letters_destination ON ONLY webhookd.dead_letters USING btree (destination_id, id);


--
-- Name: dead_letters_days_destination_id_id_idx; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX dead_letters_days_destination_id_id_idx ON ONLY webhookd.dead_letters_days USING btree (destination_id, id);


--
-- Name: dead_letters_tenant; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX dead_letters_tenant ON ONLY webhookd.dead_letters USING btree (tenant_id, id) WHERE (tenant_id IS NOT NULL);


--
-- Name: dead_letters_days_tenant_id_id_idx; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX dead_letters_days_tenant_id_id_idx ON ONLY webhookd.dead_letters_days USING btree (tenant_id, id) WHERE (tenant_id IS NOT NULL);


--
-- Name: dead_letters_kept_dead_lettered_at_idx; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX dead_letters_kept_dead_lettered_at_idx ON webhookd.dead_letters_kept USING btree (dead_lettered_at) WHERE (replayed_at IS NULL);


--
-- Name: dead_letters_kept_dead_lettered_at_idx1; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX dead_letters_kept_dead_lettered_at_idx1 ON webhookd.dead_letters_kept USING brin (dead_lettered_at);


--
-- Name: dead_letters_kept_delivery_id_idx; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX dead_letters_kept_delivery_id_idx ON webhookd.dead_letters_kept USING btree (delivery_id);


--
-- Name: dead_letters_kept_destination_id_delivery_id_idx; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX dead_letters_kept_destination_id_delivery_id_idx ON webhookd.dead_letters_kept USING btree (destination_id, delivery_id) WHERE ((replayed_at IS NULL) AND (dismissed_at IS NULL));


--
-- Name: dead_letters_kept_destination_id_id_idx; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX dead_letters_kept_destination_id_id_idx ON webhookd.dead_letters_kept USING btree (destination_id, id);


--
-- Name: dead_letters_kept_tenant_id_id_idx; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX dead_letters_kept_tenant_id_id_idx ON webhookd.dead_letters_kept USING btree (tenant_id, id) WHERE (tenant_id IS NOT NULL);


--
-- Name: deliveries_destination; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX deliveries_destination ON ONLY webhookd.deliveries USING btree (destination_id, id);


--
-- Name: deliveries_days_destination_id_id_idx; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX deliveries_days_destination_id_id_idx ON ONLY webhookd.deliveries_days USING btree (destination_id, id);


--
-- Name: deliveries_event; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX deliveries_event ON ONLY webhookd.deliveries USING btree (event_id);


--
-- Name: deliveries_days_event_id_idx; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX deliveries_days_event_id_idx ON ONLY webhookd.deliveries_days USING btree (event_id);


--
-- Name: deliveries_stopped; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX deliveries_stopped ON ONLY webhookd.deliveries USING btree (stopped_as, id) WHERE (stopped_as IS NOT NULL);


--
-- Name: deliveries_days_stopped_as_id_idx; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX deliveries_days_stopped_as_id_idx ON ONLY webhookd.deliveries_days USING btree (stopped_as, id) WHERE (stopped_as IS NOT NULL);


--
-- Name: deliveries_tenant; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX deliveries_tenant ON ONLY webhookd.deliveries USING btree (tenant_id, id) WHERE (tenant_id IS NOT NULL);


--
-- Name: deliveries_days_tenant_id_id_idx; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX deliveries_days_tenant_id_id_idx ON ONLY webhookd.deliveries_days USING btree (tenant_id, id) WHERE (tenant_id IS NOT NULL);


--
-- Name: deliveries_kept_destination_id_id_idx; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX deliveries_kept_destination_id_id_idx ON webhookd.deliveries_kept USING btree (destination_id, id);


--
-- Name: deliveries_kept_event_id_idx; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX deliveries_kept_event_id_idx ON webhookd.deliveries_kept USING btree (event_id);


--
-- Name: deliveries_kept_stopped_as_id_idx; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX deliveries_kept_stopped_as_id_idx ON webhookd.deliveries_kept USING btree (stopped_as, id) WHERE (stopped_as IS NOT NULL);


--
-- Name: deliveries_kept_tenant_id_id_idx; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX deliveries_kept_tenant_id_id_idx ON webhookd.deliveries_kept USING btree (tenant_id, id) WHERE (tenant_id IS NOT NULL);


--
-- Name: delivery_queue_due; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX delivery_queue_due ON webhookd.delivery_queue USING btree (destination_id, next_attempt_at) WITH (deduplicate_items=off) WHERE (claim_token IS NULL);


--
-- Name: delivery_queue_fallen; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX delivery_queue_fallen ON webhookd.delivery_queue USING btree (destination_id, feed_at) WHERE ((feed_at IS NOT NULL) AND (claim_token IS NULL));


--
-- Name: delivery_queue_fifo_due; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX delivery_queue_fifo_due ON webhookd.delivery_queue USING btree (destination_id, COALESCE(ordering_key, ''::text), id) WHERE (fifo AND (claim_token IS NULL));


--
-- Name: delivery_queue_fifo_in_flight; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX delivery_queue_fifo_in_flight ON webhookd.delivery_queue USING btree (destination_id, COALESCE(ordering_key, ''::text)) WHERE (fifo AND (claim_token IS NOT NULL));


--
-- Name: delivery_queue_in_flight; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX delivery_queue_in_flight ON webhookd.delivery_queue USING btree (destination_id, lease_until) WITH (deduplicate_items=off) WHERE (claim_token IS NOT NULL);


--
-- Name: destination_secrets_destination; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX destination_secrets_destination ON webhookd.destination_secrets USING btree (destination_id, retired_at);


--
-- Name: destination_stats_hours_by_hour; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX destination_stats_hours_by_hour ON ONLY webhookd.destination_stats_hours USING btree (hour);


--
-- Name: destinations_circuit_not_closed; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX destinations_circuit_not_closed ON webhookd.destinations USING btree (id) WHERE ((circuit <> 'closed'::text) AND enabled AND (deleted_at IS NULL));


--
-- Name: destinations_fan_out; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX destinations_fan_out ON webhookd.destinations USING btree (COALESCE(tenant_id, ''::text), id) INCLUDE (tenant_id, event_types) WHERE (enabled AND (deleted_at IS NULL));


--
-- Name: destinations_fifo; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX destinations_fifo ON webhookd.destinations USING btree (id) WHERE (ordering = 'fifo'::text);


--
-- Name: destinations_filtered; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX destinations_filtered ON webhookd.destinations USING btree (COALESCE(tenant_id, ''::text)) WHERE ((filter IS NOT NULL) AND enabled AND (deleted_at IS NULL));


--
-- Name: destinations_live; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX destinations_live ON webhookd.destinations USING btree (id) WHERE (deleted_at IS NULL);


--
-- Name: destinations_no_tenant; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX destinations_no_tenant ON webhookd.destinations USING btree (id) WHERE ((deleted_at IS NULL) AND (tenant_id IS NULL));


--
-- Name: destinations_tenant; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX destinations_tenant ON webhookd.destinations USING btree (tenant_id, id) WHERE ((deleted_at IS NULL) AND (tenant_id IS NOT NULL));


--
-- Name: destinations_tls; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX destinations_tls ON webhookd.destinations USING btree (id) WHERE ((tls_client_certificate IS NOT NULL) AND (deleted_at IS NULL));


--
-- Name: due_destinations_destination; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX due_destinations_destination ON webhookd.due_destinations USING btree (destination_id) WITH (deduplicate_items=off);


--
-- Name: due_destinations_due; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX due_destinations_due ON webhookd.due_destinations USING btree (due_at) WITH (deduplicate_items=off);


--
-- Name: erasures_running; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX erasures_running ON webhookd.erasures USING btree (id) WHERE (status = 'running'::text);


--
-- Name: event_subjects_any; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX event_subjects_any ON ONLY webhookd.event_subjects USING btree (subject_hash, event_id);


--
-- Name: event_subjects_days_subject_hash_event_id_idx; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX event_subjects_days_subject_hash_event_id_idx ON ONLY webhookd.event_subjects_days USING btree (subject_hash, event_id);


--
-- Name: event_subjects_kept_subject_hash_event_id_idx; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX event_subjects_kept_subject_hash_event_id_idx ON webhookd.event_subjects_kept USING btree (subject_hash, event_id);


--
-- Name: events_source; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX events_source ON ONLY webhookd.events USING btree (source_id, id) WHERE (source_id IS NOT NULL);


--
-- Name: events_days_source_id_id_idx; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX events_days_source_id_id_idx ON ONLY webhookd.events_days USING btree (source_id, id) WHERE (source_id IS NOT NULL);


--
-- Name: events_tenant; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX events_tenant ON ONLY webhookd.events USING btree (tenant_id, id) WHERE (tenant_id IS NOT NULL);


--
-- Name: events_days_tenant_id_id_idx; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX events_days_tenant_id_id_idx ON ONLY webhookd.events_days USING btree (tenant_id, id) WHERE (tenant_id IS NOT NULL);


--
-- Name: events_type; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX events_type ON ONLY webhookd.events USING btree (type, id);


--
-- Name: events_days_type_id_idx; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX events_days_type_id_idx ON ONLY webhookd.events_days USING btree (type, id);


--
-- Name: events_kept_source_id_id_idx; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX events_kept_source_id_id_idx ON webhookd.events_kept USING btree (source_id, id) WHERE (source_id IS NOT NULL);


--
-- Name: events_kept_tenant_id_id_idx; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX events_kept_tenant_id_id_idx ON webhookd.events_kept USING btree (tenant_id, id) WHERE (tenant_id IS NOT NULL);


--
-- Name: events_kept_type_id_idx; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX events_kept_type_id_idx ON webhookd.events_kept USING btree (type, id);


--
-- Name: idempotency_keys_created; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX idempotency_keys_created ON webhookd.idempotency_keys USING btree (created_at);


--
-- Name: recoveries_running; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX recoveries_running ON webhookd.recoveries USING btree (id) WHERE (status = 'running'::text);


--
-- Name: recoveries_running_destination; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX recoveries_running_destination ON webhookd.recoveries USING btree (destination_id) WHERE (status = 'running'::text);


--
-- Name: source_keys_event; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX source_keys_event ON webhookd.source_keys USING btree (event_id);


--
-- Name: sources_live; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX sources_live ON webhookd.sources USING btree (id) WHERE (deleted_at IS NULL);


--
-- Name: sources_tenant; Type: INDEX; Schema: webhookd; Owner: -
--

CREATE INDEX sources_tenant ON webhookd.sources USING btree (tenant_id, id) WHERE ((deleted_at IS NULL) AND (tenant_id IS NOT NULL));


--
-- Name: attempts_days_delivery_id_idx; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.attempts_succeeded ATTACH PARTITION webhookd.attempts_days_delivery_id_idx;


--
-- Name: attempts_days_pkey; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.attempts_pkey ATTACH PARTITION webhookd.attempts_days_pkey;


--
-- Name: attempts_days_started_at_idx; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.attempts_started ATTACH PARTITION webhookd.attempts_days_started_at_idx;


--
-- Name: attempts_kept_delivery_id_idx; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.attempts_succeeded ATTACH PARTITION webhookd.attempts_kept_delivery_id_idx;


--
-- Name: attempts_kept_pkey; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.attempts_pkey ATTACH PARTITION webhookd.attempts_kept_pkey;


--
-- Name: attempts_kept_started_at_idx; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.attempts_started ATTACH PARTITION webhookd.attempts_kept_started_at_idx;


--
-- Name: dead_letters_days_dead_lettered_at_idx; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.dead_letters_unreplayed ATTACH PARTITION webhookd.dead_letters_days_dead_lettered_at_idx;


--
-- Name: dead_letters_days_dead_lettered_at_idx1; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.dead_letters_dead_lettered ATTACH PARTITION webhookd.dead_letters_days_dead_lettered_at_idx1;


--
-- Name: dead_letters_days_delivery_id_idx; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.dead_letters_delivery ATTACH PARTITION webhookd.dead_letters_days_delivery_id_idx;


--
-- Name: dead_letters_days_destination_id_delivery_id_idx; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.dead_letters_open ATTACH PARTITION webhookd.dead_letters_days_destination_id_delivery_id_idx;


--
-- Name: dead_letters_days_destination_id_id_idx; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.dead_letters_destination ATTACH PARTITION webhookd.dead_letters_days_destination_id_id_idx;


--
-- Name: dead_letters_days_pkey; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.dead_letters_pkey ATTACH PARTITION webhookd.dead_letters_days_pkey;


--
-- Name: dead_letters_days_tenant_id_id_idx; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.dead_letters_tenant ATTACH PARTITION webhookd.dead_letters_days_tenant_id_id_idx;


--
-- Name: dead_letters_kept_dead_lettered_at_idx; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.dead_letters_unreplayed ATTACH PARTITION webhookd.dead_letters_kept_dead_lettered_at_idx;


--
-- Name: dead_letters_kept_dead_lettered_at_idx1; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.dead_letters_dead_lettered ATTACH PARTITION webhookd.dead_letters_kept_dead_lettered_at_idx1;


--
-- Name: dead_letters_kept_delivery_id_idx; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.dead_letters_delivery ATTACH PARTITION webhookd.dead_letters_kept_delivery_id_idx;


--
-- Name: dead_letters_kept_destination_id_delivery_id_idx; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.dead_letters_open ATTACH PARTITION webhookd.dead_letters_kept_destination_id_delivery_id_idx;


--
-- Name: dead_letters_kept_destination_id_id_idx; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.dead_letters_destination ATTACH PARTITION webhookd.dead_letters_kept_destination_id_id_idx;


--
-- Name: dead_letters_kept_pkey; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.dead_letters_pkey ATTACH PARTITION webhookd.dead_letters_kept_pkey;


--
-- Name: dead_letters_kept_tenant_id_id_idx; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.dead_letters_tenant ATTACH PARTITION webhookd.dead_letters_kept_tenant_id_id_idx;


--
-- Name: deliveries_days_destination_id_id_idx; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.deliveries_destination ATTACH PARTITION webhookd.deliveries_days_destination_id_id_idx;


--
-- Name: deliveries_days_event_id_idx; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.deliveries_event ATTACH PARTITION webhookd.deliveries_days_event_id_idx;


--
-- Name: deliveries_days_pkey; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.deliveries_pkey ATTACH PARTITION webhookd.deliveries_days_pkey;


--
-- Name: deliveries_days_stopped_as_id_idx; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.deliveries_stopped ATTACH PARTITION webhookd.deliveries_days_stopped_as_id_idx;


--
-- Name: deliveries_days_tenant_id_id_idx; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.deliveries_tenant ATTACH PARTITION webhookd.deliveries_days_tenant_id_id_idx;


--
-- Name: deliveries_kept_destination_id_id_idx; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.deliveries_destination ATTACH PARTITION webhookd.deliveries_kept_destination_id_id_idx;


--
-- Name: deliveries_kept_event_id_idx; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.deliveries_event ATTACH PARTITION webhookd.deliveries_kept_event_id_idx;


--
-- Name: deliveries_kept_pkey; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.deliveries_pkey ATTACH PARTITION webhookd.deliveries_kept_pkey;


--
-- Name: deliveries_kept_stopped_as_id_idx; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.deliveries_stopped ATTACH PARTITION webhookd.deliveries_kept_stopped_as_id_idx;


--
-- Name: deliveries_kept_tenant_id_id_idx; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.deliveries_tenant ATTACH PARTITION webhookd.deliveries_kept_tenant_id_id_idx;


--
-- Name: event_subjects_days_pkey; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.event_subjects_pkey ATTACH PARTITION webhookd.event_subjects_days_pkey;


--
-- Name: event_subjects_days_subject_hash_event_id_idx; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.event_subjects_any ATTACH PARTITION webhookd.event_subjects_days_subject_hash_event_id_idx;


--
-- Name: event_subjects_kept_pkey; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.event_subjects_pkey ATTACH PARTITION webhookd.event_subjects_kept_pkey;


--
-- Name: event_subjects_kept_subject_hash_event_id_idx; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.event_subjects_any ATTACH PARTITION webhookd.event_subjects_kept_subject_hash_event_id_idx;


--
-- Name: events_days_pkey; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.events_pkey ATTACH PARTITION webhookd.events_days_pkey;


--
-- Name: events_days_source_id_id_idx; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.events_source ATTACH PARTITION webhookd.events_days_source_id_id_idx;


--
-- Name: events_days_tenant_id_id_idx; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.events_tenant ATTACH PARTITION webhookd.events_days_tenant_id_id_idx;


--
-- Name: events_days_type_id_idx; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.events_type ATTACH PARTITION webhookd.events_days_type_id_idx;


--
-- Name: events_kept_pkey; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.events_pkey ATTACH PARTITION webhookd.events_kept_pkey;


--
-- Name: events_kept_source_id_id_idx; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.events_source ATTACH PARTITION webhookd.events_kept_source_id_id_idx;


--
-- Name: events_kept_tenant_id_id_idx; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.events_tenant ATTACH PARTITION webhookd.events_kept_tenant_id_id_idx;


--
-- Name: events_kept_type_id_idx; Type: INDEX ATTACH; Schema: webhookd; Owner: -
--

ALTER INDEX webhookd.events_type ATTACH PARTITION webhookd.events_kept_type_id_idx;


--
-- Name: dead_letters dead_letters_tenant; Type: TRIGGER; Schema: webhookd; Owner: -
--

CREATE TRIGGER dead_letters_tenant BEFORE INSERT ON webhookd.dead_letters FOR EACH ROW EXECUTE FUNCTION webhookd.dead_letter_tenant();


--
-- Name: deliveries deliveries_queued; Type: TRIGGER; Schema: webhookd; Owner: -
--

CREATE TRIGGER deliveries_queued AFTER INSERT ON webhookd.deliveries REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION webhookd.queue_new_deliveries();


--
-- Name: delivery_queue delivery_queue_counted_delete; Type: TRIGGER; Schema: webhookd; Owner: -
--

CREATE TRIGGER delivery_queue_counted_delete AFTER DELETE ON webhookd.delivery_queue REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION webhookd.count_queue_changes();


--
-- Name: delivery_queue delivery_queue_counted_insert; Type: TRIGGER; Schema: webhookd; Owner: -
--

CREATE TRIGGER delivery_queue_counted_insert AFTER INSERT ON webhookd.delivery_queue REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION webhookd.count_queue_changes();


--
-- Name: delivery_queue delivery_queue_counted_truncate; Type: TRIGGER; Schema: webhookd; Owner: -
--

CREATE TRIGGER delivery_queue_counted_truncate AFTER TRUNCATE ON webhookd.delivery_queue FOR EACH STATEMENT EXECUTE FUNCTION webhookd.count_truncated_queue();


--
-- Name: delivery_queue delivery_queue_counted_update; Type: TRIGGER; Schema: webhookd; Owner: -
--

CREATE TRIGGER delivery_queue_counted_update AFTER UPDATE ON webhookd.delivery_queue REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION webhookd.count_queue_changes();


--
-- Name: delivery_queue delivery_queue_fifo_finished; Type: TRIGGER; Schema: webhookd; Owner: -
--

CREATE TRIGGER delivery_queue_fifo_finished AFTER DELETE ON webhookd.delivery_queue FOR EACH ROW WHEN (old.fifo) EXECUTE FUNCTION webhookd.hint_finished_fifo();


--
-- Name: delivery_queue delivery_queue_hinted_insert; Type: TRIGGER; Schema: webhookd; Owner: -
--

CREATE TRIGGER delivery_queue_hinted_insert AFTER INSERT ON webhookd.delivery_queue REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION webhookd.hint_pending_deliveries();


--
-- Name: delivery_queue delivery_queue_hinted_update; Type: TRIGGER; Schema: webhookd; Owner: -
--

CREATE TRIGGER delivery_queue_hinted_update AFTER UPDATE ON webhookd.delivery_queue REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION webhookd.hint_pending_deliveries();


--
-- Name: destinations destinations_fifo_marked; Type: TRIGGER; Schema: webhookd; Owner: -
--

CREATE TRIGGER destinations_fifo_marked AFTER UPDATE OF ordering ON webhookd.destinations FOR EACH ROW WHEN ((new.ordering <> old.ordering)) EXECUTE FUNCTION webhookd.mark_destination_deliveries();


--
-- Name: destinations destinations_hinted_enable; Type: TRIGGER; Schema: webhookd; Owner: -
--

CREATE TRIGGER destinations_hinted_enable AFTER UPDATE OF enabled ON webhookd.destinations FOR EACH ROW WHEN ((new.enabled AND (NOT old.enabled))) EXECUTE FUNCTION webhookd.hint_enabled_destination();


--
-- Name: event_types event_types_generation; Type: TRIGGER; Schema: webhookd; Owner: -
--

CREATE TRIGGER event_types_generation AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON webhookd.event_types FOR EACH STATEMENT EXECUTE FUNCTION webhookd.bump_catalog_generation();


--
-- Name: events events_subjects_indexed; Type: TRIGGER; Schema: webhookd; Owner: -
--

CREATE TRIGGER events_subjects_indexed AFTER INSERT ON webhookd.events FOR EACH ROW WHEN (((new.subjects IS NOT NULL) AND (NOT new.kept))) EXECUTE FUNCTION webhookd.index_event_subjects();


--
-- Name: sources sources_generation; Type: TRIGGER; Schema: webhookd; Owner: -
--

CREATE TRIGGER sources_generation AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON webhookd.sources FOR EACH STATEMENT EXECUTE FUNCTION webhookd.bump_source_generation();


--
-- Name: destination_secrets destination_secrets_destination_id_fkey; Type: FK CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.destination_secrets
    ADD CONSTRAINT destination_secrets_destination_id_fkey FOREIGN KEY (destination_id) REFERENCES webhookd.destinations(id);


--
-- Name: fifo_turns fifo_turns_destination_id_fkey; Type: FK CONSTRAINT; Schema: webhookd; Owner: -
--

ALTER TABLE ONLY webhookd.fifo_turns
    ADD CONSTRAINT fifo_turns_destination_id_fkey FOREIGN KEY (destination_id) REFERENCES webhookd.destinations(id) ON DELETE CASCADE;


--
-- PostgreSQL database dump complete
--


