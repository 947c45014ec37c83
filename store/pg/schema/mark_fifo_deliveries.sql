-- A new delivery of a fifo destination is marked fifo.
CREATE OR REPLACE FUNCTION webhookd.mark_fifo_deliveries()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'webhookd'
AS $function$
BEGIN
  IF EXISTS (SELECT 1 FROM destinations WHERE ordering = 'fifo') THEN
    UPDATE deliveries d SET fifo = true
      FROM new_rows n JOIN destinations t ON t.id = n.destination_id AND t.ordering = 'fifo'
     WHERE d.id = n.id;
  END IF;
  RETURN NULL;
END
$function$;

CREATE OR REPLACE TRIGGER deliveries_fifo_marked AFTER INSERT ON webhookd.deliveries REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION mark_fifo_deliveries();
