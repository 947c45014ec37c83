-- One chunk of a bulk replay, as replay_dead_letter.sql does for one (its event locked and
-- read under the lock); SKIP LOCKED lets two bulk replays share the work without either
-- replaying a dead letter the other took.
-- The parameters, bound by name (NamedParams); each filter NULL: any.
-- @param $1 destination_id
-- @param $2 reason
-- @param $3 since
-- @param $4 until
-- @param $5 limit
-- @param $6 tenant_id the tenant_id filter
-- @param $7 scope_tenant_id the caller's tenant
WITH dl AS (
  UPDATE dead_letters x SET replayed_at = now()
   WHERE x.id IN (
     SELECT id FROM dead_letters
      WHERE replayed_at IS NULL AND dismissed_at IS NULL
        AND ($1::bigint IS NULL OR destination_id = $1) AND ($2::text IS NULL OR reason = $2)
        AND ($3::timestamptz IS NULL OR dead_lettered_at >= $3)
        AND ($4::timestamptz IS NULL OR dead_lettered_at < $4)
        AND ($6::text IS NULL OR tenant_id = $6) AND ($7::text IS NULL OR tenant_id = $7)
        AND EXISTS (SELECT 1 FROM destinations t
                     WHERE t.id = dead_letters.destination_id AND t.deleted_at IS NULL)
        AND coalesce((SELECT v.erased_at IS NULL FROM events v
                       WHERE v.id = dead_letters.event_id FOR SHARE), true)
      ORDER BY id LIMIT $5
        FOR UPDATE SKIP LOCKED)
  RETURNING delivery_id)
-- Queued again (store/pg/schema/requeue_dead_lettered.sql); the count is of the dead
-- letters replayed.
SELECT (SELECT count(*) FROM dl),
       (SELECT count(*) FROM webhookd.requeue_dead_lettered(ARRAY(SELECT delivery_id FROM dl)))
