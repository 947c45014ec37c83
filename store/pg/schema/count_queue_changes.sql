-- The gauges' net changes (store/pg/schema/delivery_gauges.sql): each statement that
-- inserts, updates or deletes queue rows adds one row per creation minute with its net
-- change of pending (no claim token) and in-flight rows. Statement triggers over
-- transition tables, so the rule holds whatever writes; the hints' triggers already keep
-- the new rows of inserts and updates, which these share.
CREATE OR REPLACE FUNCTION webhookd.count_queue_changes()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'webhookd'
AS $function$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO queue_counts (created_minute, pending, in_flight)
      SELECT date_trunc('minute', n.created_at), count(*) FILTER (WHERE n.claim_token IS NULL),
             count(*) FILTER (WHERE n.claim_token IS NOT NULL)
        FROM new_rows n GROUP BY 1;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO queue_counts (created_minute, pending, in_flight)
      SELECT date_trunc('minute', o.created_at), -count(*) FILTER (WHERE o.claim_token IS NULL),
             -count(*) FILTER (WHERE o.claim_token IS NOT NULL)
        FROM old_rows o GROUP BY 1;
  ELSE
    -- A claim, a retry, a release or a lease's end moves rows between the two counts; a
    -- new due time or lease moves none, and adds nothing.
    INSERT INTO queue_counts (created_minute, pending, in_flight)
      SELECT x.m, sum(x.p), sum(x.f) FROM (
        SELECT date_trunc('minute', n.created_at) AS m, (n.claim_token IS NULL)::int AS p,
               (n.claim_token IS NOT NULL)::int AS f
          FROM new_rows n
        UNION ALL
        SELECT date_trunc('minute', o.created_at), -(o.claim_token IS NULL)::int,
               -(o.claim_token IS NOT NULL)::int
          FROM old_rows o) x
       GROUP BY x.m HAVING sum(x.p) <> 0 OR sum(x.f) <> 0;
  END IF;
  RETURN NULL;
END
$function$;

CREATE OR REPLACE TRIGGER delivery_queue_counted_insert AFTER INSERT ON webhookd.delivery_queue REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_queue_changes();

CREATE OR REPLACE TRIGGER delivery_queue_counted_update AFTER UPDATE ON webhookd.delivery_queue REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_queue_changes();

CREATE OR REPLACE TRIGGER delivery_queue_counted_delete AFTER DELETE ON webhookd.delivery_queue REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_queue_changes();
