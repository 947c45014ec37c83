-- A replay restarts the schedule (cycle_attempts = 0) but keeps attempt_count, so the
-- attempt log counts on. A dead letter of a deleted destination is not replayed, nor one of
-- an erased event (run_erasure.sql): the event is locked (FOR SHARE) and read under the
-- lock, so an erasure batch holding it (lock_erasure_batch.sql) is waited for and then
-- seen, and one that comes after waits for this replay and cancels what it queued. An
-- event out of sight (its day being detached, docs/retention.md) does not stop a replay,
-- as before; no erasure runs while a day is being dropped (share_history_move_lock.sql).
-- $2: the caller's tenant (NULL: any).
WITH dl AS (
  UPDATE dead_letters x SET replayed_at = now()
   WHERE x.id = $1 AND x.replayed_at IS NULL AND x.dismissed_at IS NULL
     AND ($2::text IS NULL OR x.tenant_id = $2)
     AND EXISTS (SELECT 1 FROM destinations t
                  WHERE t.id = x.destination_id AND t.deleted_at IS NULL)
     AND coalesce((SELECT v.erased_at IS NULL FROM events v WHERE v.id = x.event_id
                     FOR SHARE), true)
  RETURNING delivery_id)
-- Queued again (store/pg/schema/requeue_dead_lettered.sql).
SELECT q.id FROM webhookd.requeue_dead_lettered(ARRAY(SELECT delivery_id FROM dl)) q(id)
