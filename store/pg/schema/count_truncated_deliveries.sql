-- The gauges' net changes (delivery_gauges.sql): a truncate leaves nothing to count, so
-- the counts go with the rows.
CREATE OR REPLACE FUNCTION webhookd.count_truncated_deliveries()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'webhookd'
AS $function$
BEGIN
  DELETE FROM delivery_counts;
  DELETE FROM delivery_counts_by_minute;
  RETURN NULL;
END
$function$;

CREATE OR REPLACE TRIGGER deliveries_counted_truncate AFTER TRUNCATE ON webhookd.deliveries FOR EACH STATEMENT EXECUTE FUNCTION count_truncated_deliveries();
