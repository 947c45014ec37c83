-- Up to $2 kept events (carried past their day, migrations/0038_history_days.sql) older
-- than $1 microseconds whose deliveries are all terminal now, deleted with their
-- deliveries, attempts, dead letters, idempotency keys, duplicate keys and subjects' index entries in one
-- statement. Every other event goes with its day (store/pg/sql/carry_history_day.sql and
-- the detach that follows); the kept partitions hold only the few that were unfinished
-- when their day aged out, so a round reads them whole.
-- A delivery replayed meanwhile (dead_lettered → pending after this statement's snapshot)
-- is not deleted: its DELETE waits for the replay and then finds it no longer terminal. Its
-- event then stays too, with its idempotency key: an event goes only when every delivery
-- the snapshot counted under it went.
-- An idempotency key is found through idempotency_keys_created: a key and its event are
-- written in one transaction, so they have the same created_at (now()).
WITH doomed AS (
  SELECT e.id, n.deliveries
    FROM events e
   CROSS JOIN LATERAL (
     SELECT count(*) AS deliveries,
            count(*) FILTER (WHERE d.status IN ('pending', 'in_flight')) AS unfinished
       FROM deliveries d WHERE d.event_id = e.id AND d.kept) n
   WHERE e.kept AND e.created_at < now() - $1::bigint * interval '1 microsecond'
     AND n.unfinished = 0
   ORDER BY e.id LIMIT $2
     FOR UPDATE OF e SKIP LOCKED),
gone AS (
  DELETE FROM deliveries d USING doomed
   WHERE d.event_id = doomed.id AND d.kept AND d.status IN ('succeeded', 'dead_lettered', 'cancelled')
  RETURNING d.id, d.event_id),
gone_per_event AS (
  SELECT event_id, count(*) AS deliveries FROM gone GROUP BY event_id),
attempts_gone AS (
  DELETE FROM attempts a USING gone WHERE a.delivery_id = gone.id AND a.kept),
dead_letters_gone AS (
  DELETE FROM dead_letters x USING gone WHERE x.delivery_id = gone.id AND x.kept),
events_gone AS (
  DELETE FROM events e
   USING doomed LEFT JOIN gone_per_event g ON g.event_id = doomed.id
   WHERE e.id = doomed.id AND e.kept AND doomed.deliveries = coalesce(g.deliveries, 0)
  RETURNING e.id, e.created_at, e.subjects, e.tenant_id),
-- Each subject's index entry, found by its key.
subjects_gone AS (
  DELETE FROM event_subjects s USING events_gone g, unnest(g.subjects) n(subject)
   WHERE s.subject_hash = sha256(convert_to(n.subject, 'UTF8'))
     AND s.tenant_scope = coalesce(g.tenant_id, '') AND s.event_id = g.id AND s.kept),
keys_gone AS (
  DELETE FROM idempotency_keys k USING events_gone g
   WHERE k.created_at = g.created_at AND k.event_id = g.id),
-- An inbound event's duplicate key goes with it (docs/inbound.md).
source_keys_gone AS (
  DELETE FROM source_keys k USING events_gone g WHERE k.event_id = g.id)
SELECT count(*) FROM events_gone
