-- The queue apart from the history (docs/architecture.md, "The queue and the history").
--
-- webhookd.deliveries was both: the record the API shows and the work queue, with the
-- claim and the outcome each writing a new version of its wide row and, as they changed
-- indexed columns (status, next_attempt_at, lease_until), an entry in every one of its
-- indexes. The queue is now a narrow table of what is pending or in flight, one row per
-- unfinished delivery, with the claim's indexes; a delivery's row in deliveries is
-- written at ingest and finished by an update that changes no indexed column (a HOT
-- update), and its queue row is deleted.
--
-- A queue row is in flight exactly while it carries a claim token: the token is the
-- state, so no status column can disagree with it.
CREATE TABLE webhookd.delivery_queue (
  id               bigint NOT NULL,  -- the delivery's
  destination_id   bigint NOT NULL,
  next_attempt_at  timestamptz NOT NULL,
  lease_until      timestamptz,
  claim_token      bigint,
  fifo             boolean NOT NULL DEFAULT false,  -- its destination is fifo
  ordering_key     text,
  created_at       timestamptz NOT NULL,  -- the delivery's: the gauges' over-24h count
  CONSTRAINT delivery_queue_pkey PRIMARY KEY (id),
  CONSTRAINT delivery_queue_lease_while_in_flight
    CHECK ((claim_token IS NULL) = (lease_until IS NULL)))
-- Every row is inserted, updated about twice and deleted at the delivery rate: vacuum it
-- early, so the claim's index scans meet few dead entries, and leave room on each page
-- for the claim's new version (one that moves to another page also logs a lock).
WITH (fillfactor = 70, autovacuum_vacuum_scale_factor = 0,
      autovacuum_vacuum_threshold = 5000, autovacuum_vacuum_insert_scale_factor = 0,
      autovacuum_vacuum_insert_threshold = 5000, autovacuum_vacuum_cost_delay = 0,
      autovacuum_analyze_scale_factor = 0.05);
-- One entry per row (deduplicate_items = off): an index scan marks an entry dead as soon
-- as its row is, where a posting list of a backlog's equal keys stays until every row it
-- names is dead. The claim takes each open destination's oldest due rows, so one
-- backed-up destination never has to be skipped over row by row.
CREATE INDEX delivery_queue_due
  ON webhookd.delivery_queue (destination_id, next_attempt_at) WITH (deduplicate_items = off)
  WHERE claim_token IS NULL;
-- Per-destination in-flight counts and the lease sweeper.
CREATE INDEX delivery_queue_in_flight
  ON webhookd.delivery_queue (destination_id, lease_until) WITH (deduplicate_items = off)
  WHERE claim_token IS NOT NULL;
-- A fifo destination's keys, each key's head and what it has in flight: index probes.
-- The key is indexed as coalesce(ordering_key, ''), so no key is one key.
CREATE INDEX delivery_queue_fifo_due
  ON webhookd.delivery_queue (destination_id, (coalesce(ordering_key, '')), id)
  WHERE fifo AND claim_token IS NULL;
CREATE INDEX delivery_queue_fifo_in_flight
  ON webhookd.delivery_queue (destination_id, (coalesce(ordering_key, '')))
  WHERE fifo AND claim_token IS NOT NULL;

-- The work of a database of the earlier release moves over as it stands: pending rows
-- keep their due time, retrying ones their attempt counts (they stay in deliveries), and
-- in-flight ones their claim token and lease, so an outcome of the claim that holds one
-- is still written once, and one whose worker is gone is requeued when its lease ends,
-- as before.
INSERT INTO webhookd.delivery_queue (id, destination_id, next_attempt_at, lease_until,
                                     claim_token, fifo, ordering_key, created_at)
  SELECT d.id, d.destination_id, coalesce(d.next_attempt_at, now()),
         CASE WHEN d.status = 'in_flight' THEN coalesce(d.lease_until, now()) END,
         CASE WHEN d.status = 'in_flight' THEN coalesce(d.claim_token, 0) END,
         d.fifo, d.ordering_key, d.created_at
    FROM webhookd.deliveries d
   WHERE d.status IN ('pending', 'in_flight');

-- The definitions that read the moved columns are replaced by store/pg/schema/ after the
-- migrations; the view and the triggers go first, as a column a view reads cannot be
-- dropped, and a trigger still on deliveries would fire on the statements below.
DROP VIEW IF EXISTS webhookd.delivery_rows;
DROP TRIGGER IF EXISTS deliveries_counted_insert ON webhookd.deliveries;
DROP TRIGGER IF EXISTS deliveries_counted_update ON webhookd.deliveries;
DROP TRIGGER IF EXISTS deliveries_counted_delete ON webhookd.deliveries;
DROP TRIGGER IF EXISTS deliveries_counted_truncate ON webhookd.deliveries;
DROP TRIGGER IF EXISTS deliveries_hinted_insert ON webhookd.deliveries;
DROP TRIGGER IF EXISTS deliveries_hinted_update ON webhookd.deliveries;
DROP TRIGGER IF EXISTS deliveries_fifo_marked ON webhookd.deliveries;
DROP FUNCTION IF EXISTS webhookd.count_inserted_deliveries();
DROP FUNCTION IF EXISTS webhookd.count_updated_deliveries();
DROP FUNCTION IF EXISTS webhookd.count_deleted_deliveries();
DROP FUNCTION IF EXISTS webhookd.count_truncated_deliveries();
DROP FUNCTION IF EXISTS webhookd.mark_fifo_deliveries();
DROP FUNCTION IF EXISTS webhookd.fifo_blocked_by(bigint, bigint, boolean, text, text);
-- The gauges count the queue itself (store/pg/schema/delivery_gauges.sql): it holds only
-- unfinished deliveries, so the counters kept beside every statement are not needed.
DROP TABLE webhookd.delivery_counts;
DROP TABLE webhookd.delivery_counts_by_minute;

-- In deliveries, 'pending' now means unfinished (in the queue); whether it is in flight
-- is the queue's to say.
ALTER TABLE webhookd.deliveries DROP CONSTRAINT deliveries_claim_token_while_in_flight;
UPDATE webhookd.deliveries SET status = 'pending' WHERE status = 'in_flight';

-- The history keeps the indexes the list routes and the purge read, none on a column a
-- success changes: finishing a delivery is then a HOT update. The lists by status read
-- the queue (pending, in flight), attempts_succeeded (the one successful attempt of each
-- succeeded delivery: an entry written with the attempt, not a second version of the
-- delivery's) or deliveries_stopped (dead-lettered and cancelled, few, by stopped_as).
DROP INDEX webhookd.deliveries_pending_by_destination;
DROP INDEX webhookd.deliveries_in_flight;
DROP INDEX webhookd.deliveries_status;
DROP INDEX webhookd.deliveries_fifo_in_flight;
DROP INDEX webhookd.deliveries_fifo_pending;
ALTER TABLE webhookd.deliveries
  DROP COLUMN next_attempt_at, DROP COLUMN lease_until, DROP COLUMN claim_token,
  DROP COLUMN fifo,
  -- The status a delivery stopped as without success (dead-lettered, cancelled), cleared
  -- by a replay. An index on status itself would make every outcome a non-HOT update;
  -- this column changes only when a delivery stops or is replayed, so its index costs a
  -- success nothing.
  ADD COLUMN stopped_as text,
  ADD CONSTRAINT deliveries_stopped_as_check
    CHECK (stopped_as IN ('dead_lettered', 'cancelled') AND stopped_as = status);
UPDATE webhookd.deliveries SET stopped_as = status
 WHERE status IN ('dead_lettered', 'cancelled');
CREATE INDEX deliveries_stopped ON webhookd.deliveries (stopped_as, id)
  WHERE stopped_as IS NOT NULL;
-- Room on each page for the outcome's new row versions: a HOT update needs it there, and
-- an outcome batch finishes the deliveries of a claim, neighbours on a page, at once.
-- Measured on a drain of one destination in claims of 64: at fillfactor 70, 55 % of the
-- outcome updates were HOT; at 60, 71 %; at 50, 90 %. Each non-HOT one cost three or
-- four index entries and a lock record; the price is a history heap that keeps half of
-- each new page free.
ALTER TABLE webhookd.deliveries SET (fillfactor = 50);
CREATE INDEX attempts_succeeded ON webhookd.attempts (delivery_id) WHERE outcome = 'success';
