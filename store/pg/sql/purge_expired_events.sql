-- Up to $2 events older than $1 microseconds whose deliveries are all terminal, deleted
-- with their deliveries, attempts and dead letters in one statement (foreign keys are
-- checked at its end, when the children are gone too). The deliveries are deleted only
-- while still terminal: one replayed meanwhile stays, its event's delete then fails the
-- foreign key, and this batch is rolled back and tried again later.
WITH doomed AS (
  SELECT e.id FROM events e
   WHERE e.created_at < now() - $1::bigint * interval '1 microsecond'
     AND NOT EXISTS (SELECT 1 FROM deliveries d
                      WHERE d.event_id = e.id AND d.status IN ('pending', 'in_flight'))
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
  DELETE FROM idempotency_keys k USING doomed WHERE k.event_id = doomed.id),
events_gone AS (
  DELETE FROM events e USING doomed WHERE e.id = doomed.id RETURNING 1)
SELECT count(*) FROM events_gone
