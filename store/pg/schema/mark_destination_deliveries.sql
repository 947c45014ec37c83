-- A destination made fifo marks what it has unfinished (and what a replay may bring
-- back); one made plain again unmarks it.
CREATE OR REPLACE FUNCTION webhookd.mark_destination_deliveries()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'webhookd'
AS $function$
BEGIN
  UPDATE deliveries d SET fifo = (NEW.ordering = 'fifo')
   WHERE d.destination_id = NEW.id AND d.fifo <> (NEW.ordering = 'fifo')
     AND d.status IN ('pending', 'in_flight', 'dead_lettered');
  RETURN NULL;
END
$function$;

CREATE OR REPLACE TRIGGER destinations_fifo_marked AFTER UPDATE OF ordering ON webhookd.destinations FOR EACH ROW WHEN ((new.ordering <> old.ordering)) EXECUTE FUNCTION mark_destination_deliveries();
