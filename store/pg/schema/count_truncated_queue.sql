-- The gauges' net changes (store/pg/schema/delivery_gauges.sql): a truncate leaves nothing
-- to count, so the counts go with the rows.
CREATE OR REPLACE FUNCTION webhookd.count_truncated_queue()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'webhookd'
AS $function$
BEGIN
  DELETE FROM queue_counts;
  DELETE FROM queue_counts_by_minute;
  RETURN NULL;
END
$function$;

CREATE OR REPLACE TRIGGER delivery_queue_counted_truncate AFTER TRUNCATE ON webhookd.delivery_queue FOR EACH STATEMENT EXECUTE FUNCTION count_truncated_queue();
