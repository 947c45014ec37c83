-- One page of recovery $1 (lock_recovery.sql holds it in this transaction): the next
-- $6 dead letters of destination $2 after id $5 dead-lettered in [$3, $4) and neither
-- replayed nor dismissed, replayed as replay_dead_letter_chunk.sql replays (the event
-- locked and read under the lock; an erased event's dead letter is passed over), and the
-- recovery's cursor moved past them in the same statement: a page is replayed and
-- counted once, or not at all. SKIP LOCKED passes over the dead letters a bulk replay or
-- another recovery is replaying now: they are that one's. A page that comes back short
-- ends a pass: the first pass's end starts the second from the window's start (for dead
-- letters committed behind the cursor: migrations/0046_recovery_passes.sql), and the
-- second's end is the recovery's, as is its destination's deletion.
WITH page AS (
  SELECT id, delivery_id FROM dead_letters
   WHERE destination_id = $2 AND id > $5
     AND replayed_at IS NULL AND dismissed_at IS NULL
     AND dead_lettered_at >= $3 AND dead_lettered_at < $4
     AND EXISTS (SELECT 1 FROM destinations t WHERE t.id = $2 AND t.deleted_at IS NULL)
   ORDER BY id LIMIT $6
     FOR UPDATE SKIP LOCKED),
dl AS (
  UPDATE dead_letters x SET replayed_at = now()
    FROM page
   WHERE x.id = page.id AND x.delivery_id = page.delivery_id
     AND coalesce((SELECT v.erased_at IS NULL FROM events v WHERE v.id = x.event_id
                     FOR SHARE), true)
  RETURNING x.delivery_id),
-- Queued again (store/pg/schema/requeue_dead_lettered.sql).
q AS (
  SELECT count(*) AS n FROM webhookd.requeue_dead_lettered(ARRAY(SELECT delivery_id FROM dl))),
seen AS (
  SELECT count(*) AS n, max(id) AS last FROM page),
ended AS (
  SELECT (SELECT n FROM seen) < $6 AS pass,
         (SELECT n FROM seen) < $6
           AND (r.pass = 2 OR NOT EXISTS (SELECT 1 FROM destinations t
                                           WHERE t.id = $2 AND t.deleted_at IS NULL)) AS finished
    FROM recoveries r CROSS JOIN q WHERE r.id = $1)
UPDATE recoveries x
   SET after_id = CASE WHEN ended.pass AND NOT ended.finished THEN 0
                       ELSE coalesce((SELECT last FROM seen), x.after_id) END,
       pass = CASE WHEN ended.pass AND NOT ended.finished THEN 2 ELSE x.pass END,
       replayed = x.replayed + (SELECT count(*) FROM dl),
       status = CASE WHEN ended.finished THEN 'done' ELSE 'running' END,
       finished_at = CASE WHEN ended.finished THEN now() END
  FROM ended WHERE x.id = $1
RETURNING (SELECT count(*) FROM dl), ended.finished
