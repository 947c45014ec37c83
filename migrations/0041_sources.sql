-- Inbound sources (docs/inbound.md): addresses third parties send their webhooks to.
--
-- A source holds what verification reads (the provider's settings) and its secrets,
-- sealed like a destination's signing secret. A rotation keeps the secret it replaces
-- beside the new one until `previous_valid_until`, so a provider's own key change drops
-- nothing. A deleted source keeps its row (`deleted_at`): the events it made still name
-- it and its provider.
CREATE TABLE webhookd.sources (
  id                    bigint GENERATED ALWAYS AS IDENTITY,
  tenant_id             text,
  provider              text NOT NULL,
  description           text NOT NULL DEFAULT '',
  type_prefix           text NOT NULL DEFAULT '',  -- empty: the provider's name
  tolerance_ms          bigint NOT NULL,
  url                   text NOT NULL DEFAULT '',  -- twilio
  hmac_header           text NOT NULL DEFAULT '',  -- hmac: the scheme and the event type
  hmac_algorithm        text NOT NULL DEFAULT 'sha256',
  hmac_encoding         text NOT NULL DEFAULT 'hex',
  hmac_prefix           text NOT NULL DEFAULT '',
  event_type            text NOT NULL DEFAULT '',
  dedupe_header         text NOT NULL DEFAULT '',
  secret                text NOT NULL,  -- sealed when WEBHOOKD_ENCRYPTION_KEY is set
  previous_secret       text,           -- sealed too; verifies until previous_valid_until
  previous_valid_until  timestamptz,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now(),
  deleted_at            timestamptz,
  CONSTRAINT sources_pkey PRIMARY KEY (id),
  CONSTRAINT sources_tenant_id_check CHECK (tenant_id ~ '^[A-Za-z0-9._:-]{1,128}$'),
  CONSTRAINT sources_provider_check CHECK (provider IN ('stripe', 'github', 'shopify', 'slack',
                                                        'twilio', 'standard-webhooks', 'hmac')),
  CONSTRAINT sources_hmac_algorithm_check CHECK (hmac_algorithm IN ('sha1', 'sha256', 'sha512')),
  CONSTRAINT sources_hmac_encoding_check CHECK (hmac_encoding IN ('hex', 'base64')),
  CONSTRAINT sources_tolerance_check CHECK (tolerance_ms BETWEEN 0 AND 3600000),
  CONSTRAINT sources_previous_secret_check
    CHECK ((previous_secret IS NULL) = (previous_valid_until IS NULL)));
CREATE INDEX sources_live ON webhookd.sources (id) WHERE deleted_at IS NULL;
CREATE INDEX sources_tenant ON webhookd.sources (tenant_id, id)
  WHERE deleted_at IS NULL AND tenant_id IS NOT NULL;

-- Every change to the sources bumps this one number (store/pg/schema/bump_source_generation.sql):
-- a server caches every live source with the number it read, verifies requests against
-- that copy without a statement, and writes an event only while the number is unchanged.
CREATE TABLE webhookd.source_generation (
  singleton   boolean NOT NULL DEFAULT true,
  generation  bigint NOT NULL DEFAULT 1,
  CONSTRAINT source_generation_pkey PRIMARY KEY (singleton),
  CONSTRAINT source_generation_singleton_check CHECK (singleton));
INSERT INTO webhookd.source_generation DEFAULT VALUES;

-- The provider's duplicate keys: one row per (source, key), naming the event the first
-- request made. A key goes with its event (the purge of kept events, and the drop of its
-- day), and one naming an event that is gone no longer counts.
CREATE TABLE webhookd.source_keys (
  source_id   bigint NOT NULL,
  dedupe_key  text NOT NULL,
  event_id    bigint NOT NULL,
  CONSTRAINT source_keys_pkey PRIMARY KEY (source_id, dedupe_key));
CREATE INDEX source_keys_event ON webhookd.source_keys (event_id);

-- An event made by a source names it, its provider and its duplicate key (written
-- together by store/pg/sql/insert_inbound_event.sql). The columns are NULL for every event
-- before: adding them rewrites nothing; the partial index reads each day once, writes
-- nothing for them, and serves `GET /v1/events?source_id=`.
ALTER TABLE webhookd.events
  ADD COLUMN source_id bigint,
  ADD COLUMN source_provider text,
  ADD COLUMN dedupe_key text;
CREATE INDEX events_source ON webhookd.events (source_id, id) WHERE source_id IS NOT NULL;
