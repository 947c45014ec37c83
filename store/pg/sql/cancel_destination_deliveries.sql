-- A deleted destination's unfinished deliveries are cancelled: out of the queue, and
-- finished as cancelled in the history. $1 the destination.
WITH gone AS (
  DELETE FROM delivery_queue WHERE destination_id = $1 RETURNING id)
UPDATE deliveries d SET status = 'cancelled', stopped_as = 'cancelled', updated_at = now()
  FROM gone WHERE d.id = gone.id
