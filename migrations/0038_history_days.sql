-- The history by day (docs/retention.md): retention detaches and drops a whole day
-- instead of deleting its rows one by one.
--
-- Each table that grows with traffic (events, deliveries, attempts, dead letters and the
-- subjects' index) is partitioned twice:
--   - by `kept` (LIST): `<table>_kept` holds what was carried past its day (an event
--     whose deliveries were unfinished when its day aged out, with everything about it);
--     `<table>_days` holds the rest;
--   - `<table>_days` by day (RANGE over a bigint key): `<table>_pYYYYMMDD`. Events and
--     deliveries are partitioned by their id, attempts and dead letters by their
--     delivery's id, the subjects' index by its event's id, so a day's partitions hold
--     its events and everything about them, and every lookup by one of those keys reads
--     one day and the kept partition.
-- An id written from now on carries its day (UTC) in its high bits:
-- day << 36 | (sequence & (2^36 - 1)) (store/pg/schema/history_id.sql). Ids of the
-- earlier release stay as they are (they are below 2^36): their days' partitions get the
-- bounds their rows have, from each day's first id. No partition is the DEFAULT one, as
-- PostgreSQL refuses DETACH ... CONCURRENTLY beside one; days ahead are created by
-- webhookd.add_history_days (store/pg/schema/add_history_days.sql), run by the migrator
-- and by each retention round.
--
-- This migration copies the history into its partitions: its time and WAL are those of
-- writing the history once. No foreign key joins these tables (none ever did), so a day
-- is dropped without a check of what refers to it.

-- The one view over these tables is dropped here and made again by the definitions
-- (store/pg/schema/delivery_rows.sql); the earlier tables move aside with their indexes,
-- triggers and sequences, and go at the end.
DROP VIEW IF EXISTS webhookd.delivery_rows;
-- Its bisection of ids served the row-by-row purge of every event; the purge now reads
-- only the kept partitions.
DROP FUNCTION IF EXISTS webhookd.last_event_before(timestamptz);
CREATE SCHEMA webhookd_before_0038;
ALTER TABLE webhookd.events SET SCHEMA webhookd_before_0038;
ALTER TABLE webhookd.deliveries SET SCHEMA webhookd_before_0038;
ALTER TABLE webhookd.attempts SET SCHEMA webhookd_before_0038;
ALTER TABLE webhookd.dead_letters SET SCHEMA webhookd_before_0038;
ALTER TABLE webhookd.event_subjects SET SCHEMA webhookd_before_0038;

-- The days the history has, with each day's bounds in both key spaces (events' ids;
-- deliveries' ids, which attempts and dead letters follow). A NULL lower bound is
-- MINVALUE (the first day). `detaching_since` is set when retention starts to drop the
-- day, so that a round after a crash finishes it (store/pg/sql/retention_*.sql).
CREATE TABLE webhookd.history_days (
  day              date NOT NULL,
  event_from       bigint,
  event_to         bigint NOT NULL,
  delivery_from    bigint,
  delivery_to      bigint NOT NULL,
  detaching_since  timestamptz,
  CONSTRAINT history_days_pkey PRIMARY KEY (day));

CREATE SEQUENCE webhookd.events_id_seq;
CREATE SEQUENCE webhookd.deliveries_id_seq;
CREATE SEQUENCE webhookd.dead_letters_id_seq;
SELECT setval('webhookd.events_id_seq', last_value, is_called)
  FROM webhookd_before_0038.events_id_seq;
SELECT setval('webhookd.deliveries_id_seq', last_value, is_called)
  FROM webhookd_before_0038.deliveries_id_seq;
SELECT setval('webhookd.dead_letters_id_seq', last_value, is_called)
  FROM webhookd_before_0038.dead_letters_id_seq;

CREATE TABLE webhookd.events (
  id            bigint NOT NULL,  -- its default: store/pg/schema/history_id.sql
  type          text NOT NULL,
  payload       text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  tenant_id     text,
  ordering_key  text,
  traceparent   text,
  tracestate    text,
  subjects      text[],
  erased_at     timestamptz,
  kept          boolean NOT NULL DEFAULT false,
  CONSTRAINT events_tenant_id_check CHECK (tenant_id ~ '^[A-Za-z0-9._:-]{1,128}$'),
  CONSTRAINT events_payload_unless_erased CHECK ((payload IS NULL) = (erased_at IS NOT NULL)))
PARTITION BY LIST (kept);
ALTER SEQUENCE webhookd.events_id_seq OWNED BY webhookd.events.id;

CREATE TABLE webhookd.deliveries (
  id                bigint NOT NULL,  -- its default: store/pg/schema/history_id.sql
  event_id          bigint NOT NULL,
  destination_id    bigint NOT NULL,
  status            text NOT NULL DEFAULT 'pending',
  attempt_count     integer NOT NULL DEFAULT 0,
  cycle_attempts    integer NOT NULL DEFAULT 0,
  last_attempt_at   timestamptz,
  last_status_code  integer,
  last_error        text,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  tenant_id         text,
  ordering_key      text,
  stopped_as        text,
  kept              boolean NOT NULL DEFAULT false,
  CONSTRAINT deliveries_status_check
    CHECK (status IN ('pending', 'in_flight', 'succeeded', 'dead_lettered', 'cancelled')),
  CONSTRAINT deliveries_stopped_as_check
    CHECK (stopped_as IN ('dead_lettered', 'cancelled') AND stopped_as = status))
PARTITION BY LIST (kept);
ALTER SEQUENCE webhookd.deliveries_id_seq OWNED BY webhookd.deliveries.id;

CREATE TABLE webhookd.attempts (
  delivery_id     bigint NOT NULL,
  attempt_number  integer NOT NULL,
  started_at      timestamptz NOT NULL,
  duration_ms     integer NOT NULL,
  status_code     integer,
  error           text,
  response_body   text NOT NULL DEFAULT '',
  outcome         text NOT NULL,
  kept            boolean NOT NULL DEFAULT false,  -- its delivery's
  CONSTRAINT attempts_outcome_check
    CHECK (outcome IN ('success', 'retryable', 'permanent', 'skipped')))
PARTITION BY LIST (kept);

CREATE TABLE webhookd.dead_letters (
  id                bigint NOT NULL DEFAULT nextval('webhookd.dead_letters_id_seq'),
  delivery_id       bigint NOT NULL,
  event_id          bigint NOT NULL,
  destination_id    bigint NOT NULL,
  reason            text NOT NULL,
  attempt_count     integer NOT NULL,
  last_status_code  integer,
  last_error        text,
  dead_lettered_at  timestamptz NOT NULL DEFAULT now(),
  replayed_at       timestamptz,
  tenant_id         text,
  dismissed_at      timestamptz,
  kept              boolean NOT NULL DEFAULT false,  -- its delivery's
  CONSTRAINT dead_letters_reason_check CHECK (reason IN ('exhausted', 'permanent_failure')))
PARTITION BY LIST (kept);
ALTER SEQUENCE webhookd.dead_letters_id_seq OWNED BY webhookd.dead_letters.id;

CREATE TABLE webhookd.event_subjects (
  subject_hash  bytea NOT NULL,
  tenant_scope  text NOT NULL,
  event_id      bigint NOT NULL,
  kept          boolean NOT NULL DEFAULT false)  -- its event's
PARTITION BY LIST (kept);

-- The partitions: each table's kept one, its days' parent, and the days the copied
-- history has (a day's lower bound is its first id; ids are drawn in time order, so a
-- row written across midnight may sit in the day beside its own), through today.
DO $$
DECLARE
  today date := (now() AT TIME ZONE 'UTC')::date;
  t text;
  d record;
  e_prev bigint := NULL;
  d_prev bigint := NULL;
  e_from bigint;
  d_from bigint;
  has_rows boolean;
  days date[] := '{}';
  e_froms bigint[] := '{}';
  d_froms bigint[] := '{}';
  i int;
BEGIN
  FOREACH t IN ARRAY ARRAY['events', 'deliveries', 'attempts', 'dead_letters', 'event_subjects']
  LOOP
    EXECUTE format('CREATE TABLE webhookd.%I PARTITION OF webhookd.%I FOR VALUES IN (true)%s',
                   t || '_kept', t,
                   CASE WHEN t = 'deliveries' THEN ' WITH (fillfactor = 50)' ELSE '' END);
    EXECUTE format('CREATE TABLE webhookd.%I PARTITION OF webhookd.%I FOR VALUES IN (false)'
                   ' PARTITION BY RANGE (%I)', t || '_days', t,
                   CASE t WHEN 'events' THEN 'id' WHEN 'deliveries' THEN 'id'
                          WHEN 'event_subjects' THEN 'event_id' ELSE 'delivery_id' END);
  END LOOP;

  -- Each day of the copied events before today, with its first event id and the first
  -- id of a delivery of that event or a later one; bounds that do not rise are moved up.
  FOR d IN
    SELECT x.day, x.lo,
           (SELECT min(dl.id) FROM webhookd_before_0038.deliveries dl
             WHERE dl.event_id = (SELECT min(y.event_id) FROM webhookd_before_0038.deliveries y
                                   WHERE y.event_id >= x.lo)) AS dlo
      FROM (SELECT (e.created_at AT TIME ZONE 'UTC')::date AS day, min(e.id) AS lo
              FROM webhookd_before_0038.events e GROUP BY 1) x
     WHERE x.day < today ORDER BY x.day
  LOOP
    e_from := greatest(d.lo, coalesce(e_prev + 1, d.lo));
    d_from := coalesce(d.dlo, d_prev + 1, 1);
    IF d_prev IS NOT NULL AND d_from <= d_prev THEN d_from := d_prev + 1; END IF;
    days := days || d.day;
    e_froms := e_froms || e_from;
    d_froms := d_froms || d_from;
    e_prev := e_from;
    d_prev := d_from;
  END LOOP;
  -- Today holds the rest of the copied rows (from its first event on, or past the last
  -- one) and today's new ids.
  e_from := coalesce(
    (SELECT min(e.id) FROM webhookd_before_0038.events e
      WHERE (e.created_at AT TIME ZONE 'UTC')::date >= today),
    (SELECT max(e.id) + 1 FROM webhookd_before_0038.events e), 1);
  e_from := greatest(e_from, coalesce(e_prev + 1, e_from));
  d_from := coalesce(
    (SELECT min(dl.id) FROM webhookd_before_0038.deliveries dl
      WHERE dl.event_id = (SELECT min(y.event_id) FROM webhookd_before_0038.deliveries y
                            WHERE y.event_id >= e_from)),
    (SELECT max(dl.id) + 1 FROM webhookd_before_0038.deliveries dl), 1);
  d_from := greatest(d_from, coalesce(d_prev + 1, d_from));
  days := days || today;
  e_froms := e_froms || e_from;
  d_froms := d_froms || d_from;
  -- Without an earlier row, the days begin at today's first id: a new database's history
  -- is all ids with a day, and a day before it can be made (scripts/bench does) beside it.
  has_rows := EXISTS (SELECT 1 FROM webhookd_before_0038.events)
           OR EXISTS (SELECT 1 FROM webhookd_before_0038.deliveries)
           OR EXISTS (SELECT 1 FROM webhookd_before_0038.attempts)
           OR EXISTS (SELECT 1 FROM webhookd_before_0038.dead_letters)
           OR EXISTS (SELECT 1 FROM webhookd_before_0038.event_subjects);

  FOR i IN 1 .. array_length(days, 1) LOOP
    INSERT INTO webhookd.history_days (day, event_from, event_to, delivery_from, delivery_to)
    VALUES (days[i],
            CASE WHEN i > 1 THEN e_froms[i]
                 WHEN NOT has_rows THEN (today - date '1970-01-01')::bigint << 36 END,
            CASE WHEN i < array_length(days, 1) THEN e_froms[i + 1]
                 ELSE ((today + 1) - date '1970-01-01')::bigint << 36 END,
            CASE WHEN i > 1 THEN d_froms[i]
                 WHEN NOT has_rows THEN (today - date '1970-01-01')::bigint << 36 END,
            CASE WHEN i < array_length(days, 1) THEN d_froms[i + 1]
                 ELSE ((today + 1) - date '1970-01-01')::bigint << 36 END);
  END LOOP;

  FOR d IN SELECT * FROM webhookd.history_days ORDER BY day LOOP
    FOREACH t IN ARRAY ARRAY['events', 'deliveries', 'attempts', 'dead_letters', 'event_subjects']
    LOOP
      IF t IN ('events', 'event_subjects') THEN
        e_from := d.event_from;
        d_from := d.event_to;
      ELSE
        e_from := d.delivery_from;
        d_from := d.delivery_to;
      END IF;
      EXECUTE format('CREATE TABLE webhookd.%I PARTITION OF webhookd.%I'
                     ' FOR VALUES FROM (%s) TO (%s)%s',
                     t || '_p' || to_char(d.day, 'YYYYMMDD'), t || '_days',
                     coalesce(e_from::text, 'MINVALUE'), d_from,
                     CASE WHEN t = 'deliveries' THEN ' WITH (fillfactor = 50)' ELSE '' END);
    END LOOP;
  END LOOP;
END
$$;

-- The copy, before the indexes, which are built once over each partition.
INSERT INTO webhookd.events (id, type, payload, created_at, tenant_id, ordering_key,
                             traceparent, tracestate, subjects, erased_at)
  SELECT id, type, payload, created_at, tenant_id, ordering_key, traceparent, tracestate,
         subjects, erased_at
    FROM webhookd_before_0038.events;
INSERT INTO webhookd.deliveries (id, event_id, destination_id, status, attempt_count,
                                 cycle_attempts, last_attempt_at, last_status_code,
                                 last_error, created_at, updated_at, tenant_id,
                                 ordering_key, stopped_as)
  SELECT id, event_id, destination_id, status, attempt_count, cycle_attempts,
         last_attempt_at, last_status_code, last_error, created_at, updated_at, tenant_id,
         ordering_key, stopped_as
    FROM webhookd_before_0038.deliveries;
INSERT INTO webhookd.attempts (delivery_id, attempt_number, started_at, duration_ms,
                               status_code, error, response_body, outcome)
  SELECT delivery_id, attempt_number, started_at, duration_ms, status_code, error,
         response_body, outcome
    FROM webhookd_before_0038.attempts;
INSERT INTO webhookd.dead_letters (id, delivery_id, event_id, destination_id, reason,
                                   attempt_count, last_status_code, last_error,
                                   dead_lettered_at, replayed_at, tenant_id, dismissed_at)
  SELECT id, delivery_id, event_id, destination_id, reason, attempt_count,
         last_status_code, last_error, dead_lettered_at, replayed_at, tenant_id,
         dismissed_at
    FROM webhookd_before_0038.dead_letters;
INSERT INTO webhookd.event_subjects (subject_hash, tenant_scope, event_id)
  SELECT subject_hash, tenant_scope, event_id FROM webhookd_before_0038.event_subjects;

DROP SCHEMA webhookd_before_0038 CASCADE;

-- The same indexes as before, each a partitioned index over every partition; a primary
-- key holds the partition keys, so `kept` is its last column.
ALTER TABLE webhookd.events ADD CONSTRAINT events_pkey PRIMARY KEY (id, kept);
CREATE INDEX events_type ON webhookd.events (type, id);
CREATE INDEX events_tenant ON webhookd.events (tenant_id, id) WHERE tenant_id IS NOT NULL;

ALTER TABLE webhookd.deliveries ADD CONSTRAINT deliveries_pkey PRIMARY KEY (id, kept);
CREATE INDEX deliveries_event ON webhookd.deliveries (event_id);
CREATE INDEX deliveries_destination ON webhookd.deliveries (destination_id, id);
CREATE INDEX deliveries_tenant ON webhookd.deliveries (tenant_id, id)
  WHERE tenant_id IS NOT NULL;
CREATE INDEX deliveries_stopped ON webhookd.deliveries (stopped_as, id)
  WHERE stopped_as IS NOT NULL;

ALTER TABLE webhookd.attempts
  ADD CONSTRAINT attempts_pkey PRIMARY KEY (delivery_id, attempt_number, kept);
CREATE INDEX attempts_started ON webhookd.attempts USING brin (started_at);
CREATE INDEX attempts_succeeded ON webhookd.attempts (delivery_id) WHERE outcome = 'success';

ALTER TABLE webhookd.dead_letters
  ADD CONSTRAINT dead_letters_pkey PRIMARY KEY (id, delivery_id, kept);
CREATE INDEX dead_letters_destination ON webhookd.dead_letters (destination_id, id);
CREATE INDEX dead_letters_unreplayed ON webhookd.dead_letters (dead_lettered_at)
  WHERE replayed_at IS NULL;
CREATE INDEX dead_letters_delivery ON webhookd.dead_letters (delivery_id);
CREATE INDEX dead_letters_tenant ON webhookd.dead_letters (tenant_id, id)
  WHERE tenant_id IS NOT NULL;
CREATE INDEX dead_letters_dead_lettered ON webhookd.dead_letters USING brin (dead_lettered_at);
CREATE INDEX dead_letters_open ON webhookd.dead_letters (destination_id, delivery_id)
  WHERE replayed_at IS NULL AND dismissed_at IS NULL;

ALTER TABLE webhookd.event_subjects
  ADD CONSTRAINT event_subjects_pkey PRIMARY KEY (subject_hash, tenant_scope, event_id, kept);
CREATE INDEX event_subjects_any ON webhookd.event_subjects (subject_hash, event_id);
