-- A fifo delivery that leaves the queue (finished, dead-lettered, cancelled) lets the next
-- of its key go, so its destination is visited now. A row trigger with a condition: the
-- deletes of every other delivery, nearly all of them, fire nothing.
CREATE OR REPLACE FUNCTION webhookd.hint_finished_fifo()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'webhookd'
AS $function$
BEGIN
  INSERT INTO due_destinations (destination_id, due_at) VALUES (OLD.destination_id, now());
  RETURN NULL;
END
$function$;

CREATE OR REPLACE TRIGGER delivery_queue_fifo_finished AFTER DELETE ON webhookd.delivery_queue FOR EACH ROW WHEN (old.fifo) EXECUTE FUNCTION hint_finished_fifo();
