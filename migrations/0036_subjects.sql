-- Subjects and erasure (docs/privacy.md): the people or things an event is about, found
-- by subject, and erased on request (GDPR Art. 15 and 17).
--
-- An event keeps its subjects as given (events.subjects, shown by the API), and each one
-- is indexed in event_subjects by its SHA-256, never its text: the index is what an
-- erasure and `GET /v1/events?subject=` read, and an erasure record keeps the same hash,
-- so nothing but the event itself holds a subject's text, and the erasure takes it off.
ALTER TABLE webhookd.events
  ALTER COLUMN payload DROP NOT NULL,  -- NULL once erased
  ADD COLUMN subjects text[],          -- NULL: none
  ADD COLUMN erased_at timestamptz,
  ADD CONSTRAINT events_payload_unless_erased CHECK ((payload IS NULL) = (erased_at IS NOT NULL));

-- Written by a row trigger on events (store/pg/schema/index_event_subjects.sql) for an event
-- with subjects, whichever statement made it. A tenant's key reads its own tenant's
-- entries through the primary key; an operator's key, across tenants, through
-- event_subjects_any. tenant_scope is the event's tenant, '' for none.
CREATE TABLE webhookd.event_subjects (
  subject_hash  bytea NOT NULL,  -- sha256 of the subject's UTF-8 bytes
  tenant_scope  text NOT NULL,
  event_id      bigint NOT NULL,
  CONSTRAINT event_subjects_pkey PRIMARY KEY (subject_hash, tenant_scope, event_id));
CREATE INDEX event_subjects_any ON webhookd.event_subjects (subject_hash, event_id);

-- One row per erasure request, kept: what was erased, when and for whom, by the hash of
-- the subject alone.
CREATE TABLE webhookd.erasures (
  id                    bigint GENERATED ALWAYS AS IDENTITY,
  subject_hash          bytea NOT NULL,
  tenant_id             text,  -- erased within this tenant; NULL: every tenant
  status                text NOT NULL DEFAULT 'running',
  events                integer NOT NULL DEFAULT 0,
  cancelled_deliveries  integer NOT NULL DEFAULT 0,
  created_at            timestamptz NOT NULL DEFAULT now(),
  finished_at           timestamptz,
  CONSTRAINT erasures_pkey PRIMARY KEY (id),
  CONSTRAINT erasures_status_check CHECK (status IN ('running', 'done')),
  CONSTRAINT erasures_finished_when_done CHECK ((status = 'done') = (finished_at IS NOT NULL)));
CREATE INDEX erasures_running ON webhookd.erasures (id) WHERE status = 'running';

-- publish() and its checks take the subjects: new signatures, so the old functions go
-- (store/pg/schema/ makes the new ones after the migrations).
DROP FUNCTION IF EXISTS webhookd.publish(text, text, text, text, text, text, text, text);
DROP FUNCTION IF EXISTS webhookd.publish_arguments(text, text, text, text, text, text);
