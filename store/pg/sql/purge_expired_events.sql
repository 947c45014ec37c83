-- Up to $2 events older than $1 microseconds whose deliveries are all terminal, deleted
-- with their deliveries, attempts, dead letters and idempotency keys in one statement
-- (foreign keys are checked at its end, when the children are gone too). The deliveries
-- are deleted only while still terminal: one replayed meanwhile stays, its event's delete
-- then fails the foreign key, and this batch is rolled back and tried again later.
--
-- Every row is found through an index, so a batch costs the same however large the tables
-- are. OFFSET 0 keeps the check for unfinished deliveries a lookup per event (through
-- deliveries_event): as a join, the planner would rather read every delivery once. An
-- idempotency key is found through idempotency_keys_created: a key and its event are
-- written in one transaction, so they have the same created_at (now()).
WITH doomed AS (
  SELECT e.id, e.created_at FROM events e
   WHERE e.created_at < now() - $1::bigint * interval '1 microsecond'
     AND NOT EXISTS (SELECT 1 FROM deliveries d
                      WHERE d.event_id = e.id AND d.status IN ('pending', 'in_flight')
                     OFFSET 0)
   ORDER BY e.id LIMIT $2
     FOR UPDATE SKIP LOCKED),
gone AS (
  DELETE FROM deliveries d USING doomed
   WHERE d.event_id = doomed.id AND d.status IN ('succeeded', 'dead_lettered', 'cancelled')
  RETURNING d.id),
attempts_gone AS (
  DELETE FROM attempts a USING gone WHERE a.delivery_id = gone.id),
dead_letters_gone AS (
  DELETE FROM dead_letters x USING gone WHERE x.delivery_id = gone.id),
keys_gone AS (
  DELETE FROM idempotency_keys k USING doomed
   WHERE k.created_at = doomed.created_at AND k.event_id = doomed.id),
events_gone AS (
  DELETE FROM events e USING doomed WHERE e.id = doomed.id RETURNING 1)
SELECT count(*) FROM events_gone
