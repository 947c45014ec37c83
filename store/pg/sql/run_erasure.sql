-- Carries out up to $2 events of erasure $1 (docs/privacy.md), unless it is done or
-- another transaction is carrying it out (no row then); returns whether it is done now,
-- which it is once a batch finds fewer than $2. A subject named by a million events is
-- erased a batch at a time, each a short transaction, so one request never holds a
-- statement, its locks and its WAL without bound. For each event naming the subject, of
-- the erasure's tenant (any when it has none), accepted before the erasure was asked for:
-- - its payload goes (NULL, erased_at set), and the subject leaves its list and the index;
-- - its unfinished deliveries leave the queue, cancelled with last_error 'erased' (an
--   attempt in flight then finds no queue row, so its outcome is not recorded);
-- - every stored response body of its attempts is emptied.
-- Ids, types, times, statuses and outcomes stay. Its dead letters stay, and no replay
-- takes them (replay_dead_letter.sql: an erased event is never sent again).
WITH e AS (
  SELECT id, subject_hash, tenant_id, created_at FROM erasures
   WHERE id = $1 AND status = 'running'
     FOR UPDATE SKIP LOCKED),
batch AS (
  SELECT s.event_id, s.tenant_scope FROM event_subjects s, e, events v
   WHERE s.subject_hash = e.subject_hash
     AND (e.tenant_id IS NULL OR s.tenant_scope = e.tenant_id)
     AND v.id = s.event_id AND v.created_at <= e.created_at
   LIMIT $2),
named AS (
  DELETE FROM event_subjects s USING e, batch b
   WHERE s.subject_hash = e.subject_hash AND s.tenant_scope = b.tenant_scope
     AND s.event_id = b.event_id
  RETURNING s.event_id),
erased AS (
  UPDATE events v
     SET payload = NULL, erased_at = coalesce(v.erased_at, now()),
         subjects = nullif(ARRAY(SELECT s FROM unnest(v.subjects) s
                                  WHERE sha256(convert_to(s, 'UTF8'))
                                        <> (SELECT subject_hash FROM e)), '{}')
    FROM named WHERE v.id = named.event_id
  RETURNING v.id),
unfinished AS (
  DELETE FROM delivery_queue q USING deliveries d, named
   WHERE d.event_id = named.event_id AND q.id = d.id
  RETURNING q.id),
cancelled AS (
  UPDATE deliveries d
     SET status = 'cancelled', stopped_as = 'cancelled', last_error = 'erased',
         updated_at = now()
    FROM unfinished WHERE d.id = unfinished.id
  RETURNING d.id),
bodies AS (
  UPDATE attempts a SET response_body = ''
    FROM deliveries d, named
   WHERE d.event_id = named.event_id AND a.delivery_id = d.id AND a.response_body <> ''),
-- (SELECT count(*) FROM batch) reads the batch once more; it is no more than $2 rows.
finishing AS (
  SELECT (SELECT count(*) FROM batch) < $2 AS done)
UPDATE erasures x
   SET status = CASE WHEN f.done THEN 'done' ELSE 'running' END,
       events = x.events + (SELECT count(*) FROM erased),
       cancelled_deliveries = x.cancelled_deliveries + (SELECT count(*) FROM cancelled),
       finished_at = CASE WHEN f.done THEN now() END
  FROM e, finishing f WHERE x.id = e.id
RETURNING f.done
