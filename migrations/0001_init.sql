-- The whole schema of webhookd. Public ids are these bigint keys with a prefix
-- (dst_, evt_, dlv_, dlq_, key_) added at the API.

CREATE TABLE api_keys (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name        text NOT NULL DEFAULT '',
  role        text NOT NULL CHECK (role IN ('publisher', 'admin')),
  key_hash    text NOT NULL UNIQUE,  -- hex SHA-256; the key itself is never stored
  created_at  timestamptz NOT NULL DEFAULT now(),
  revoked_at  timestamptz
);

CREATE TABLE destinations (
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  url            text NOT NULL,
  description    text NOT NULL DEFAULT '',
  event_types    text[] NOT NULL DEFAULT '{}',
  secret         text NOT NULL,
  headers        jsonb NOT NULL DEFAULT '{}',
  enabled        boolean NOT NULL DEFAULT true,
  max_in_flight  integer CHECK (max_in_flight > 0),  -- NULL: WEBHOOKD_DESTINATION_MAX_IN_FLIGHT
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  deleted_at     timestamptz  -- soft delete: dead letters and attempts keep their history
);
CREATE INDEX destinations_live ON destinations (id) WHERE deleted_at IS NULL;

CREATE TABLE events (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  type        text NOT NULL,
  payload     text NOT NULL,  -- compact JSON, kept as text so every attempt sends the same bytes
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_type ON events (type, id);

CREATE TABLE deliveries (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_id         bigint NOT NULL REFERENCES events (id),
  destination_id   bigint NOT NULL REFERENCES destinations (id),
  status           text NOT NULL DEFAULT 'pending'
                   CHECK (status IN ('pending', 'in_flight', 'succeeded', 'dead_lettered', 'cancelled')),
  attempt_count    integer NOT NULL DEFAULT 0,  -- every attempt ever made
  cycle_attempts   integer NOT NULL DEFAULT 0,  -- attempts since the last (re)start of the schedule
  next_attempt_at  timestamptz,                 -- due time while pending
  lease_until      timestamptz,                 -- while in_flight
  claim_token      bigint,                      -- while in_flight; every write presents it
  last_attempt_at  timestamptz,
  last_status_code integer,
  last_error       text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now()
);
-- The claim query walks this; terminal rows leave it, so it stays small under churn.
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status = 'pending';
-- The claim takes each open destination's oldest due rows, so one backed-up destination
-- never has to be skipped over row by row.
CREATE INDEX deliveries_pending_by_destination ON deliveries (destination_id, next_attempt_at)
  WHERE status = 'pending';
-- Per-destination in-flight counts and the lease sweeper.
CREATE INDEX deliveries_in_flight ON deliveries (destination_id, lease_until) WHERE status = 'in_flight';
CREATE INDEX deliveries_event ON deliveries (event_id);
CREATE INDEX deliveries_destination ON deliveries (destination_id, id);
ALTER TABLE deliveries SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_cost_delay = 0,
                            autovacuum_analyze_scale_factor = 0.05, fillfactor = 85);

CREATE TABLE attempts (
  delivery_id     bigint NOT NULL REFERENCES deliveries (id),
  attempt_number  integer NOT NULL,
  started_at      timestamptz NOT NULL,
  duration_ms     integer NOT NULL,
  status_code     integer,
  error           text,
  response_body   text NOT NULL DEFAULT '',  -- first 4 KiB, made valid UTF-8
  outcome         text NOT NULL CHECK (outcome IN ('success', 'retryable', 'permanent')),
  PRIMARY KEY (delivery_id, attempt_number)
);

-- The health figures scan attempts by time; BRIN costs almost nothing to keep on an
-- append-mostly table.
CREATE INDEX attempts_started ON attempts USING brin (started_at);

CREATE TABLE dead_letters (
  id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  delivery_id       bigint NOT NULL REFERENCES deliveries (id),
  event_id          bigint NOT NULL,
  destination_id    bigint NOT NULL,
  reason            text NOT NULL CHECK (reason IN ('exhausted', 'permanent_failure')),
  attempt_count     integer NOT NULL,
  last_status_code  integer,
  last_error        text,
  dead_lettered_at  timestamptz NOT NULL DEFAULT now(),
  replayed_at       timestamptz
);
CREATE INDEX dead_letters_destination ON dead_letters (destination_id, id);
CREATE INDEX dead_letters_unreplayed ON dead_letters (dead_lettered_at) WHERE replayed_at IS NULL;

CREATE TABLE idempotency_keys (
  key           text PRIMARY KEY,
  request_hash  text NOT NULL,   -- hex SHA-256 of the request body
  event_id      bigint NOT NULL,  -- the 202 is re-rendered from it
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
