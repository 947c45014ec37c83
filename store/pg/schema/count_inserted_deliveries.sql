-- The gauges' net changes (delivery_gauges.sql): a statement that inserts deliveries adds
-- one row per creation minute with what it added (see count_deleted_deliveries.sql).
CREATE OR REPLACE FUNCTION webhookd.count_inserted_deliveries()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'webhookd'
AS $function$
BEGIN
  INSERT INTO delivery_counts (created_minute, pending, in_flight)
    SELECT date_trunc('minute', n.created_at), count(*) FILTER (WHERE n.status = 'pending'),
           count(*) FILTER (WHERE n.status = 'in_flight')
      FROM new_rows n WHERE n.status IN ('pending', 'in_flight') GROUP BY 1;
  RETURN NULL;
END
$function$;

CREATE OR REPLACE TRIGGER deliveries_counted_insert AFTER INSERT ON webhookd.deliveries REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_inserted_deliveries();
