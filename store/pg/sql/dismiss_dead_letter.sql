-- Sets a dead letter aside without replaying it: under on_dead_letter 'block' its fifo key
-- goes on, so its destination is visited now (store/pg/schema/hint_pending_deliveries.sql).
-- $2: the caller's tenant (NULL: any).
WITH dl AS (
  UPDATE dead_letters x SET dismissed_at = now()
   WHERE x.id = $1 AND x.replayed_at IS NULL AND x.dismissed_at IS NULL
     AND ($2::text IS NULL OR x.tenant_id = $2)
  RETURNING x.id, x.delivery_id, x.event_id, x.destination_id, x.reason, x.attempt_count,
            x.last_status_code, x.last_error, x.dead_lettered_at, x.replayed_at, x.tenant_id,
            x.dismissed_at),
hinted AS (
  INSERT INTO due_destinations (destination_id, due_at) SELECT destination_id, now() FROM dl)
SELECT * FROM dl
