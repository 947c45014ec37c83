-- Every new pending delivery is queued, by whichever statement made it (REST ingest,
-- grouped ingest, publish(), the operational events): its queue row is due now, and
-- marked fifo when its destination is. The only thing that queues a delivery again
-- is a replay (requeue_dead_lettered.sql). A row written as
-- kept is one that retention copied out of a day it dropped
-- (drop_detached_history_day.sql), whose queue row is already there.
CREATE OR REPLACE FUNCTION webhookd.queue_new_deliveries()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'webhookd'
AS $function$
BEGIN
  INSERT INTO delivery_queue (id, destination_id, next_attempt_at, fifo, ordering_key,
                              created_at)
    SELECT n.id, n.destination_id, now(), t.id IS NOT NULL, n.ordering_key, n.created_at
      FROM new_rows n
      LEFT JOIN destinations t ON t.id = n.destination_id AND t.ordering = 'fifo'
     WHERE n.status = 'pending' AND NOT n.kept
     ORDER BY n.id;
  RETURN NULL;
END
$function$;

CREATE OR REPLACE TRIGGER deliveries_queued AFTER INSERT ON webhookd.deliveries REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION queue_new_deliveries();
