-- The gauges' net changes (delivery_gauges.sql): a statement that changes deliveries'
-- status adds one row per creation minute with the net change it made (see
-- count_deleted_deliveries.sql).
CREATE OR REPLACE FUNCTION webhookd.count_updated_deliveries()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'webhookd'
AS $function$
BEGIN
  INSERT INTO delivery_counts (created_minute, pending, in_flight)
    SELECT x.m, sum(x.p), sum(x.f) FROM (
      SELECT date_trunc('minute', n.created_at) AS m, (n.status = 'pending')::int AS p,
             (n.status = 'in_flight')::int AS f
        FROM new_rows n WHERE n.status IN ('pending', 'in_flight')
      UNION ALL
      SELECT date_trunc('minute', o.created_at), -(o.status = 'pending')::int,
             -(o.status = 'in_flight')::int
        FROM old_rows o WHERE o.status IN ('pending', 'in_flight')) x
     GROUP BY x.m HAVING sum(x.p) <> 0 OR sum(x.f) <> 0;
  RETURN NULL;
END
$function$;

CREATE OR REPLACE TRIGGER deliveries_counted_update AFTER UPDATE ON webhookd.deliveries REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_updated_deliveries();
