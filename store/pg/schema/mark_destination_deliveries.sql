-- A destination made fifo marks what it has queued; one made plain again unmarks it. A
-- replay queues a delivery marked as its destination is then.
CREATE OR REPLACE FUNCTION webhookd.mark_destination_deliveries()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'webhookd'
AS $function$
BEGIN
  UPDATE delivery_queue q SET fifo = (NEW.ordering = 'fifo')
   WHERE q.destination_id = NEW.id AND q.fifo <> (NEW.ordering = 'fifo');
  RETURN NULL;
END
$function$;

CREATE OR REPLACE TRIGGER destinations_fifo_marked AFTER UPDATE OF ordering ON webhookd.destinations FOR EACH ROW WHEN ((new.ordering <> old.ordering)) EXECUTE FUNCTION mark_destination_deliveries();
