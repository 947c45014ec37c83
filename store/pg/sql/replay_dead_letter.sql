-- A replay restarts the schedule (cycle_attempts = 0) but keeps attempt_count, so the
-- attempt log counts on. A dead letter of a deleted destination is not replayed.
-- $2: the caller's tenant (NULL: any).
WITH dl AS (
  UPDATE dead_letters x SET replayed_at = now()
   WHERE x.id = $1 AND x.replayed_at IS NULL AND x.dismissed_at IS NULL
     AND ($2::text IS NULL OR x.tenant_id = $2)
     AND EXISTS (SELECT 1 FROM destinations t
                  WHERE t.id = x.destination_id AND t.deleted_at IS NULL)
  RETURNING delivery_id)
UPDATE deliveries d
   SET status = 'pending', cycle_attempts = 0, next_attempt_at = now(), lease_until = NULL,
       claim_token = NULL, updated_at = now()
  FROM dl WHERE d.id = dl.delivery_id AND d.status = 'dead_lettered'
RETURNING d.id
