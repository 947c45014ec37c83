-- The next batch of erasure $1 (docs/privacy.md): the ids of up to $2 events naming its
-- subject, of its tenant (any when it has none), accepted before the erasure was asked
-- for. No row when the erasure is done or another transaction is carrying it out.
-- The events stay locked until the batch commits, and so does the erasure itself:
-- - a replay locks the event it queues again (FOR SHARE, replay_dead_letter.sql), so a
--   replay that came first has queued its delivery before run_erasure.sql, which runs
--   after this with a snapshot of its own, looks for the event's queue rows, and one that
--   comes after finds the event erased;
-- - FOR NO KEY UPDATE is the lock run_erasure.sql's UPDATE of the event takes anyway: the
--   batch holds it a statement earlier, and nothing more (ingest, claims and reads of
--   events take no row lock and never wait for it).
WITH e AS (
  SELECT id, subject_hash, tenant_id, created_at FROM erasures
   WHERE id = $1 AND status = 'running'
     FOR UPDATE SKIP LOCKED),
batch AS (
  SELECT v.id FROM e, event_subjects s, events v
   WHERE s.subject_hash = e.subject_hash
     AND (e.tenant_id IS NULL OR s.tenant_scope = e.tenant_id)
     AND v.id = s.event_id AND v.created_at <= e.created_at
   LIMIT $2
     FOR NO KEY UPDATE OF v)
SELECT coalesce((SELECT array_agg(id) FROM batch), '{}') FROM e
