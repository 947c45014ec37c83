-- Whatever makes a delivery pending adds a hint for its destination in the same
-- statement, so the claim visits only destinations with something due; and a fifo
-- delivery that finished lets the next of its key go, so its destination is visited now. Only a fifo delivery carries a key: others add nothing.
CREATE OR REPLACE FUNCTION webhookd.hint_pending_deliveries()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'webhookd'
AS $function$
BEGIN
  INSERT INTO due_destinations (destination_id, due_at)
    SELECT n.destination_id, min(n.next_attempt_at) FROM new_rows n
     WHERE n.status = 'pending' GROUP BY n.destination_id
    UNION ALL
    SELECT n.destination_id, now() FROM new_rows n
     WHERE n.fifo AND n.status IN ('succeeded', 'dead_lettered', 'cancelled')
     GROUP BY n.destination_id;
  RETURN NULL;
END
$function$;

CREATE OR REPLACE TRIGGER deliveries_hinted_insert AFTER INSERT ON webhookd.deliveries REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION hint_pending_deliveries();

CREATE OR REPLACE TRIGGER deliveries_hinted_update AFTER UPDATE ON webhookd.deliveries REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION hint_pending_deliveries();
