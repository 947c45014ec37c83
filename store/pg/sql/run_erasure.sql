-- Carries out a batch of erasure $1 (docs/privacy.md): events $2, which
-- lock_erasure_batch.sql chose and locked in this transaction; the erasure is done once a
-- batch holds fewer than $3. A subject named by a million events is erased a batch at a
-- time, each a short transaction, so one request never holds a statement, its locks and
-- its WAL without bound. For each event:
-- - its payload goes (NULL, erased_at set), and the subject leaves its list and the index;
-- - its unfinished deliveries leave the queue, cancelled with last_error 'erased' (an
--   attempt in flight then finds no queue row, so its outcome is not recorded).
-- Its stored response bodies and error texts go next (erase_error_texts.sql), in a
-- statement of their own. Ids, types, times, statuses and outcomes stay. Its dead letters
-- stay, and no replay takes them (replay_dead_letter.sql: an erased event is never sent
-- again).
WITH e AS (
  SELECT id, subject_hash, tenant_id FROM erasures WHERE id = $1 AND status = 'running'),
named AS (
  DELETE FROM event_subjects s USING e
   WHERE s.subject_hash = e.subject_hash AND s.event_id = ANY($2::bigint[])
     AND (e.tenant_id IS NULL OR s.tenant_scope = e.tenant_id)
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
  DELETE FROM delivery_queue q USING deliveries d
   WHERE d.event_id = ANY($2::bigint[]) AND q.id = d.id
  RETURNING q.id),
cancelled AS (
  UPDATE deliveries d
     SET status = 'cancelled', stopped_as = 'cancelled', last_error = 'erased',
         updated_at = now()
    FROM unfinished WHERE d.id = unfinished.id
  RETURNING d.id),
finishing AS (
  SELECT cardinality($2::bigint[]) < $3 AS done)
UPDATE erasures x
   SET status = CASE WHEN f.done THEN 'done' ELSE 'running' END,
       events = x.events + (SELECT count(*) FROM erased),
       cancelled_deliveries = x.cancelled_deliveries + (SELECT count(*) FROM cancelled),
       finished_at = CASE WHEN f.done THEN now() END
  FROM e, finishing f WHERE x.id = e.id
RETURNING f.done
