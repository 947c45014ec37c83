-- The baseline: webhookd's tables, indexes, constraints, sequences, grants and seed rows
-- as migrations 0001-0034 of the releases before it left them, in one file. It holds no
-- function, trigger or view: each of those has its one live file in store/pg/schema/,
-- which `webhookd migrate` applies after the migrations (docs/architecture.md, "The SQL
-- definitions").
--
-- Numbered 0034 because it stands for the database at 0034: a database migrated by an
-- earlier release up to 0034_plain_values_that_read_as_sealed is recognised by the
-- migrator (store/pg/migrator.cc), which records this file without running it; one
-- part-way through 0001-0034 is refused with what to do. The next migration is 0035.
--
-- What needs a function does not live here, since no function exists yet when this
-- file runs on an empty database: events.traceparent's default is set by
-- store/pg/schema/new_traceparent.sql, the EXECUTE grant on publish() by publish.sql,
-- each trigger by its function's file and the view delivery_rows by its own. Column
-- order, constraint names and storage settings are the ones the migrations left, so a
-- database made here and one migrated to 0034 have the same catalog
-- (tests/store/pg/baseline_upgrade_pgtest.cc compares their pg_dump).

-- The state of store/pg/schema/filter_shape_expr.sql's walk over a filter's tokens: a
-- type its functions take, so it exists before them.
CREATE TYPE webhookd.filter_shape AS (
  pos      int,      -- the next token
  refs     int,      -- references to the payload so far
  steps    int,      -- accessors and methods so far
  kvs      int,      -- .keyvalue() calls so far
  multi    boolean,  -- the expression just read may yield several items
  kind     text,     -- pred | num (a number literal) | long (one over 64 digits) | lit | val | path
  problem  text);

-- Public ids are these bigint keys with a prefix (dst_, evt_, dlv_, dlq_, key_) added at
-- the API.

CREATE TABLE webhookd.api_keys (
  id          bigint GENERATED ALWAYS AS IDENTITY,
  name        text NOT NULL DEFAULT '',
  role        text NOT NULL,
  key_hash    text NOT NULL,  -- hex SHA-256 of the key; the key itself is never stored
  created_at  timestamptz NOT NULL DEFAULT now(),
  revoked_at  timestamptz,
  tenant_id   text,  -- a tenant key's tenant (docs/api.md, "Tenants")
  expires_at  timestamptz,
  CONSTRAINT api_keys_pkey PRIMARY KEY (id),
  CONSTRAINT api_keys_key_hash_key UNIQUE (key_hash),
  CONSTRAINT api_keys_role_check CHECK (role IN ('publisher', 'admin', 'tenant')),
  CONSTRAINT api_keys_tenant_check CHECK ((role = 'tenant') = (tenant_id IS NOT NULL)),
  CONSTRAINT api_keys_tenant_id_check CHECK (tenant_id ~ '^[A-Za-z0-9._:-]{1,128}$'));

CREATE TABLE webhookd.destinations (
  id                       bigint GENERATED ALWAYS AS IDENTITY,
  url                      text NOT NULL,
  description              text NOT NULL DEFAULT '',
  event_types              text[] NOT NULL DEFAULT '{}',  -- empty: every type; "p.*": a prefix
  secret                   text NOT NULL,  -- sealed when WEBHOOKD_ENCRYPTION_KEY is set
  headers                  jsonb NOT NULL DEFAULT '{}',
  enabled                  boolean NOT NULL DEFAULT true,
  max_in_flight            integer,
  created_at               timestamptz NOT NULL DEFAULT now(),
  updated_at               timestamptz NOT NULL DEFAULT now(),
  deleted_at               timestamptz,  -- soft delete: dead letters and attempts keep their history
  -- Tenants: 1-128 of [A-Za-z0-9._:-]; the API validates, the CHECKs keep any other
  -- writer honest. An event fans out only to destinations of its own tenant.
  tenant_id                text,
  -- Receiver protection (docs/architecture.md, "Receiver protection"): the rate limit,
  -- why it was disabled, the circuit and the adaptive cap.
  rate_limit               integer,
  disabled_reason          text,
  circuit                  text NOT NULL DEFAULT 'closed',
  consecutive_failures     integer NOT NULL DEFAULT 0,
  failing_since            timestamptz,
  next_probe_at            timestamptz,
  cooldown_us              bigint,
  effective_max_in_flight  integer,
  success_run              integer NOT NULL DEFAULT 0,
  ramping                  boolean NOT NULL DEFAULT false,
  tokens                   double precision NOT NULL DEFAULT 0,
  tokens_at                timestamptz,
  ordering                 text NOT NULL DEFAULT 'none',  -- docs/ordering.md
  on_dead_letter           text NOT NULL DEFAULT 'continue',
  -- The filter as written, and as PostgreSQL compiled it (docs/filters.md).
  filter                   text,
  filter_path              jsonpath GENERATED ALWAYS AS (filter::jsonpath) STORED,
  -- Egress (docs/egress.md): mutual TLS and OAuth 2.0 client credentials; the key and
  -- the client secret are sealed like the signing secret.
  tls_client_certificate   text,
  tls_client_key           text,
  tls_ca_certificate       text,
  auth_token_url           text,
  auth_client_id           text,
  auth_client_secret       text,
  auth_scope               text,
  CONSTRAINT destinations_pkey PRIMARY KEY (id),
  CONSTRAINT destinations_auth_whole
    CHECK ((auth_token_url IS NULL) = (auth_client_id IS NULL)
           AND (auth_token_url IS NULL) = (auth_client_secret IS NULL)
           AND (auth_scope IS NULL OR auth_token_url IS NOT NULL)),
  CONSTRAINT destinations_circuit_check CHECK (circuit IN ('closed', 'open', 'half_open')),
  CONSTRAINT destinations_disabled_reason_check
    CHECK (disabled_reason IN ('manual', 'gone', 'failing')),
  CONSTRAINT destinations_effective_max_in_flight_check CHECK (effective_max_in_flight > 0),
  CONSTRAINT destinations_max_in_flight_check CHECK (max_in_flight > 0),
  CONSTRAINT destinations_on_dead_letter_check CHECK (on_dead_letter IN ('continue', 'block')),
  CONSTRAINT destinations_ordering_check CHECK (ordering IN ('none', 'fifo')),
  CONSTRAINT destinations_rate_limit_check CHECK (rate_limit BETWEEN 1 AND 100000),
  CONSTRAINT destinations_tenant_id_check CHECK (tenant_id ~ '^[A-Za-z0-9._:-]{1,128}$'),
  CONSTRAINT destinations_tls_pair
    CHECK ((tls_client_certificate IS NULL) = (tls_client_key IS NULL)))
-- The claim and the outcomes write these rows; room on the page keeps those updates HOT
-- (no index covers a column they change).
WITH (fillfactor = 70);
CREATE INDEX destinations_live ON webhookd.destinations (id) WHERE deleted_at IS NULL;
-- The fan-out's lookup: an event's tenant finds its live destinations without reading
-- anyone else's. NULL and '' are the same key here ('' is no valid tenant), so "no
-- tenant" is one equality too and the fan-out is a plain index probe, with a generic plan
-- as well. It carries what the fan-out reads, so the probe is an index-only scan.
CREATE INDEX destinations_fan_out ON webhookd.destinations ((coalesce(tenant_id, '')), id)
  INCLUDE (tenant_id, event_types) WHERE enabled AND deleted_at IS NULL;
-- The `tenant_id=` filter and a tenant key's reach, newest first. Partial, so rows
-- without a tenant cost nothing more to insert.
CREATE INDEX destinations_tenant ON webhookd.destinations (tenant_id, id)
  WHERE deleted_at IS NULL AND tenant_id IS NOT NULL;
-- WEBHOOKD_MAX_DESTINATIONS_PER_TENANT's count for the no-tenant space.
CREATE INDEX destinations_no_tenant ON webhookd.destinations (id)
  WHERE deleted_at IS NULL AND tenant_id IS NULL;
-- The open-circuits gauge reads the few destinations whose circuit is not closed.
CREATE INDEX destinations_circuit_not_closed ON webhookd.destinations (id)
  WHERE circuit <> 'closed' AND enabled AND deleted_at IS NULL;
CREATE INDEX destinations_fifo ON webhookd.destinations (id) WHERE ordering = 'fifo';
-- The fan-out's "does any candidate have a filter?" probe: destinations_fan_out's
-- expression, over filtered live destinations alone (empty while no one filters).
CREATE INDEX destinations_filtered ON webhookd.destinations (coalesce(tenant_id, ''))
  WHERE filter IS NOT NULL AND enabled AND deleted_at IS NULL;
-- The certificates' expiry gauge reads the destinations that have one, and no others.
CREATE INDEX destinations_tls ON webhookd.destinations (id)
  WHERE tls_client_certificate IS NOT NULL AND deleted_at IS NULL;

-- Secret rotation: a destination's earlier secrets keep signing until their grace period
-- ends; they are erased once expired (they are never shown again).
CREATE TABLE webhookd.destination_secrets (
  destination_id  bigint NOT NULL,
  secret          text NOT NULL,
  retired_at      timestamptz NOT NULL DEFAULT now(),
  expires_at      timestamptz NOT NULL,
  CONSTRAINT destination_secrets_destination_id_fkey
    FOREIGN KEY (destination_id) REFERENCES webhookd.destinations (id));
CREATE INDEX destination_secrets_destination
  ON webhookd.destination_secrets (destination_id, retired_at);

CREATE TABLE webhookd.events (
  id            bigint GENERATED ALWAYS AS IDENTITY,
  type          text NOT NULL,
  payload       text NOT NULL,  -- kept as text so every attempt sends the same bytes
  created_at    timestamptz NOT NULL DEFAULT now(),
  tenant_id     text,
  ordering_key  text,
  -- W3C trace context (docs/tracing.md). The default, a fresh trace, calls
  -- new_traceparent(): it is set by store/pg/schema/new_traceparent.sql.
  traceparent   text,
  tracestate    text,
  CONSTRAINT events_pkey PRIMARY KEY (id),
  CONSTRAINT events_tenant_id_check CHECK (tenant_id ~ '^[A-Za-z0-9._:-]{1,128}$'));
CREATE INDEX events_type ON webhookd.events (type, id);
CREATE INDEX events_tenant ON webhookd.events (tenant_id, id) WHERE tenant_id IS NOT NULL;

CREATE TABLE webhookd.deliveries (
  id               bigint GENERATED ALWAYS AS IDENTITY,
  event_id         bigint NOT NULL,
  destination_id   bigint NOT NULL,
  status           text NOT NULL DEFAULT 'pending',
  attempt_count    integer NOT NULL DEFAULT 0,
  cycle_attempts   integer NOT NULL DEFAULT 0,  -- attempts since the last replay
  next_attempt_at  timestamptz,
  lease_until      timestamptz,
  claim_token      bigint,  -- the claim that holds it in flight (see the constraint below)
  last_attempt_at  timestamptz,
  last_status_code integer,
  last_error       text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  tenant_id        text,  -- the event's, copied so lists filter a tenant by index
  ordering_key     text,
  fifo             boolean NOT NULL DEFAULT false,  -- its destination is fifo
  CONSTRAINT deliveries_pkey PRIMARY KEY (id),
  CONSTRAINT deliveries_status_check
    CHECK (status IN ('pending', 'in_flight', 'succeeded', 'dead_lettered', 'cancelled')))
WITH (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_cost_delay = 0,
      autovacuum_analyze_scale_factor = 0.05, fillfactor = 85);
-- A delivery is in flight exactly while a claim holds it: its outcome is written only by
-- the claim whose token it carries. NOT VALID, as 0024 added it to a full table without
-- a second pass; it still checks every row written, and keeping it so here gives a new
-- database the catalog of an upgraded one.
ALTER TABLE webhookd.deliveries ADD CONSTRAINT deliveries_claim_token_while_in_flight
  CHECK ((status = 'in_flight') = (claim_token IS NOT NULL)) NOT VALID;
-- The queue's indexes keep one entry per row (deduplicate_items = off): an index scan
-- marks an entry dead as soon as its row is, where a posting list of a backlog's equal
-- keys stays until every row it names is dead, so each claim fetched the taken rows again.
-- The claim takes each open destination's oldest due rows, so one backed-up destination
-- never has to be skipped over row by row.
CREATE INDEX deliveries_pending_by_destination
  ON webhookd.deliveries (destination_id, next_attempt_at) WITH (deduplicate_items = off)
  WHERE status = 'pending';
-- Per-destination in-flight counts and the lease sweeper.
CREATE INDEX deliveries_in_flight
  ON webhookd.deliveries (destination_id, lease_until) WITH (deduplicate_items = off)
  WHERE status = 'in_flight';
CREATE INDEX deliveries_event ON webhookd.deliveries (event_id);
CREATE INDEX deliveries_destination ON webhookd.deliveries (destination_id, id);
CREATE INDEX deliveries_tenant ON webhookd.deliveries (tenant_id, id) WHERE tenant_id IS NOT NULL;
-- GET /v1/deliveries?status=…: one index serves every status.
CREATE INDEX deliveries_status ON webhookd.deliveries (status, id);
-- A fifo destination's keys, each key's head and what it has in flight: index probes.
-- The key is indexed as coalesce(ordering_key, ''), so no key is one key.
CREATE INDEX deliveries_fifo_in_flight
  ON webhookd.deliveries (destination_id, (coalesce(ordering_key, '')))
  WHERE fifo AND status = 'in_flight';
CREATE INDEX deliveries_fifo_pending
  ON webhookd.deliveries (destination_id, (coalesce(ordering_key, '')), id)
  WHERE fifo AND status = 'pending';

CREATE TABLE webhookd.attempts (
  delivery_id     bigint NOT NULL,
  attempt_number  integer NOT NULL,
  started_at      timestamptz NOT NULL,
  duration_ms     integer NOT NULL,
  status_code     integer,
  error           text,
  response_body   text NOT NULL DEFAULT '',
  outcome         text NOT NULL,
  CONSTRAINT attempts_pkey PRIMARY KEY (delivery_id, attempt_number));
-- 'skipped': not sent because the circuit was open. NOT VALID as 0011 added it, so the
-- two kinds of database keep one catalog; every row written is checked.
ALTER TABLE webhookd.attempts ADD CONSTRAINT attempts_outcome_check
  CHECK (outcome IN ('success', 'retryable', 'permanent', 'skipped')) NOT VALID;
-- The health figures scan attempts by time; BRIN costs almost nothing to keep on an
-- append-mostly table.
CREATE INDEX attempts_started ON webhookd.attempts USING brin (started_at);

CREATE TABLE webhookd.dead_letters (
  id                bigint GENERATED ALWAYS AS IDENTITY,
  delivery_id       bigint NOT NULL,
  event_id          bigint NOT NULL,
  destination_id    bigint NOT NULL,
  reason            text NOT NULL,
  attempt_count     integer NOT NULL,
  last_status_code  integer,
  last_error        text,
  dead_lettered_at  timestamptz NOT NULL DEFAULT now(),
  replayed_at       timestamptz,
  tenant_id         text,  -- its delivery's (store/pg/schema/dead_letter_tenant.sql)
  dismissed_at      timestamptz,
  CONSTRAINT dead_letters_pkey PRIMARY KEY (id),
  CONSTRAINT dead_letters_reason_check CHECK (reason IN ('exhausted', 'permanent_failure')));
CREATE INDEX dead_letters_destination ON webhookd.dead_letters (destination_id, id);
CREATE INDEX dead_letters_unreplayed ON webhookd.dead_letters (dead_lettered_at)
  WHERE replayed_at IS NULL;
-- The purge deletes deliveries and looks their dead letters up by delivery_id: without
-- this index, one scan of the whole table per deleted delivery.
CREATE INDEX dead_letters_delivery ON webhookd.dead_letters (delivery_id);
CREATE INDEX dead_letters_tenant ON webhookd.dead_letters (tenant_id, id)
  WHERE tenant_id IS NOT NULL;
-- The dead letters of a window (stats, the chart, ?since=): written in time order, so
-- BRIN costs next to nothing to keep.
CREATE INDEX dead_letters_dead_lettered ON webhookd.dead_letters USING brin (dead_lettered_at);
-- Under on_dead_letter 'block': the open dead letters of a destination, the only ones
-- that hold a key.
CREATE INDEX dead_letters_open ON webhookd.dead_letters (destination_id, delivery_id)
  WHERE replayed_at IS NULL AND dismissed_at IS NULL;

CREATE TABLE webhookd.idempotency_keys (
  key           text NOT NULL,
  request_hash  text NOT NULL,   -- hex SHA-256 of the request body
  event_id      bigint NOT NULL,  -- the 202 is re-rendered from it
  created_at    timestamptz NOT NULL DEFAULT now(),
  tenant_scope  text NOT NULL DEFAULT '',  -- the event's tenant, '' for none
  CONSTRAINT idempotency_keys_pkey PRIMARY KEY (tenant_scope, key));
CREATE INDEX idempotency_keys_created ON webhookd.idempotency_keys (created_at);

-- The gauges without counting the deliveries (store/pg/schema/delivery_gauges.sql):
-- every statement that changes deliveries adds its net change per creation minute to
-- delivery_counts (only ever inserted, so no writer waits on another), and a read folds
-- them into delivery_counts_by_minute.
CREATE TABLE webhookd.delivery_counts (
  created_minute  timestamptz NOT NULL,  -- the deliveries' created_at, to the minute
  pending         bigint NOT NULL,
  in_flight       bigint NOT NULL);
CREATE TABLE webhookd.delivery_counts_by_minute (
  created_minute  timestamptz NOT NULL,
  pending         bigint NOT NULL,
  in_flight       bigint NOT NULL,
  CONSTRAINT delivery_counts_by_minute_pkey PRIMARY KEY (created_minute));

-- The claim reads only the destinations that have something due: each destination with
-- pending work has a hint at or before its earliest pending delivery's due time
-- (store/pg/schema/hint_pending_deliveries.sql writes them, claim_due.sql moves them).
CREATE TABLE webhookd.due_destinations (
  destination_id  bigint NOT NULL,
  due_at          timestamptz NOT NULL)
-- Rows come and go at the ingest rate: vacuum it early.
WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 10000,
      autovacuum_vacuum_cost_delay = 0);
CREATE INDEX due_destinations_due ON webhookd.due_destinations (due_at)
  WITH (deduplicate_items = off);
CREATE INDEX due_destinations_destination ON webhookd.due_destinations (destination_id)
  WITH (deduplicate_items = off);

-- Each fifo destination's key of the last head its latest claim took: the next claim's
-- walk over the keys begins after it, so the keys take turns (fifo_due_heads.sql).
CREATE TABLE webhookd.fifo_turns (
  destination_id  bigint NOT NULL,
  last_key        text NOT NULL,
  CONSTRAINT fifo_turns_pkey PRIMARY KEY (destination_id),
  CONSTRAINT fifo_turns_destination_id_fkey
    FOREIGN KEY (destination_id) REFERENCES webhookd.destinations (id) ON DELETE CASCADE);

-- The event catalog (docs/catalog.md). json, not jsonb: kept as written (key order,
-- numbers), as the API shows them.
CREATE TABLE webhookd.event_types (
  name         text NOT NULL,
  description  text NOT NULL DEFAULT '',
  schema       json,                        -- NULL: any JSON object
  examples     json NOT NULL DEFAULT '[]',  -- each a payload that the schema accepts
  deprecated   boolean NOT NULL DEFAULT false,
  builtin      boolean NOT NULL DEFAULT false,  -- webhookd's own: not changed by the API
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT event_types_pkey PRIMARY KEY (name));
-- One row: the catalog's generation (bumped by every change to event_types,
-- store/pg/schema/bump_catalog_generation.sql) and the WEBHOOKD_EVENT_TYPES mode that the
-- last server started wrote, which webhookd.publish() follows.
CREATE TABLE webhookd.event_catalog (
  singleton   boolean NOT NULL DEFAULT true,
  generation  bigint NOT NULL DEFAULT 1,
  mode        text NOT NULL DEFAULT 'open',
  CONSTRAINT event_catalog_pkey PRIMARY KEY (singleton),
  CONSTRAINT event_catalog_mode_check CHECK (mode IN ('open', 'strict')),
  CONSTRAINT event_catalog_singleton_check CHECK (singleton));
INSERT INTO webhookd.event_catalog DEFAULT VALUES;

-- webhookd's own operational event types, read-only through the API.
INSERT INTO webhookd.event_types (name, description, schema, builtin) VALUES
('webhookd.destination.circuit_opened',
 'A destination''s circuit opened after consecutive failures; webhookd probes it before sending more.',
 '{"type": "object", "required": ["destination_id", "consecutive_failures"],
   "properties": {"destination_id": {"type": "string"}, "tenant_id": {"type": ["string", "null"]},
                  "consecutive_failures": {"type": "integer", "minimum": 1},
                  "last_error": {"type": ["string", "null"]}}}', true),
('webhookd.destination.recovered',
 'A destination''s circuit closed after a successful probe.',
 '{"type": "object", "required": ["destination_id"],
   "properties": {"destination_id": {"type": "string"}, "tenant_id": {"type": ["string", "null"]},
                  "failing_since": {"type": ["string", "null"], "format": "date-time"}}}', true),
('webhookd.destination.disabled',
 'webhookd disabled a destination: it answered 410 Gone, or failed for longer than WEBHOOKD_DISABLE_AFTER.',
 '{"type": "object", "required": ["destination_id", "reason"],
   "properties": {"destination_id": {"type": "string"}, "tenant_id": {"type": ["string", "null"]},
                  "reason": {"enum": ["gone", "failing"]}}}', true),
('webhookd.delivery.dead_lettered',
 'A delivery gave up and was moved to the dead letters.',
 '{"type": "object", "required": ["dead_letter_id", "delivery_id", "event_id", "destination_id", "reason"],
   "properties": {"dead_letter_id": {"type": "string"}, "delivery_id": {"type": "string"},
                  "event_id": {"type": "string"}, "destination_id": {"type": "string"},
                  "tenant_id": {"type": ["string", "null"]},
                  "reason": {"enum": ["exhausted", "permanent_failure"]}}}', true);

-- The role that may call webhookd.publish() (docs/api.md, "Publishing from SQL"): made
-- here when this user may create roles, marked as webhookd's own by its comment, and
-- given the schema. The EXECUTE grant on publish() needs the function, so it is given by
-- store/pg/schema/publish.sql, to a marked role that holds the schema. A role of that
-- name that webhookd did not make (with a login and a known password, say) would hold
-- that right: it is refused.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'webhookd_publisher') THEN
    CREATE ROLE webhookd_publisher NOLOGIN;
    COMMENT ON ROLE webhookd_publisher IS 'webhookd publisher role';
  END IF;
EXCEPTION
  WHEN insufficient_privilege THEN
    RAISE NOTICE 'webhookd_publisher not created: this user may not create roles';
  WHEN duplicate_object OR unique_violation THEN
    NULL;  -- another database's migration made it at the same moment
END
$$;
DO $$
DECLARE
  r pg_roles%ROWTYPE;
BEGIN
  SELECT * INTO r FROM pg_roles WHERE rolname = 'webhookd_publisher';
  IF FOUND THEN
    IF coalesce(shobj_description(r.oid, 'pg_authid'), '') <> 'webhookd publisher role' THEN
      RAISE EXCEPTION 'role webhookd_publisher exists but was not created by webhookd migrate: webhookd will not grant it publish(). If a DBA made it for webhookd, make it NOLOGIN and run COMMENT ON ROLE webhookd_publisher IS ''webhookd publisher role''; otherwise drop or rename it.';
    END IF;
    GRANT USAGE ON SCHEMA webhookd TO webhookd_publisher;
  END IF;
END
$$;
