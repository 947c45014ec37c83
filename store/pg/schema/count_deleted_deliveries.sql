-- The gauges' net changes (delivery_gauges.sql): a statement that deletes deliveries adds
-- one row per creation minute with what it removed. Statement triggers over transition
-- tables, so the rule holds whatever writes, and rows are only ever inserted, so no
-- writer waits on another.
CREATE OR REPLACE FUNCTION webhookd.count_deleted_deliveries()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'webhookd'
AS $function$
BEGIN
  INSERT INTO delivery_counts (created_minute, pending, in_flight)
    SELECT date_trunc('minute', o.created_at), -count(*) FILTER (WHERE o.status = 'pending'),
           -count(*) FILTER (WHERE o.status = 'in_flight')
      FROM old_rows o WHERE o.status IN ('pending', 'in_flight') GROUP BY 1;
  RETURN NULL;
END
$function$;

CREATE OR REPLACE TRIGGER deliveries_counted_delete AFTER DELETE ON webhookd.deliveries REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_deleted_deliveries();
