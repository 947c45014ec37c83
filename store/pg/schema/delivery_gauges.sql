-- The gauges: pending, in flight, and unfinished deliveries created over 24 hours ago (to
-- the minute: a minute counts once it began over 24 hours ago), from the queue's counters
-- (store/pg/schema/count_queue_changes.sql), so a read costs the changes since the last
-- one, never the backlog. One caller at a time moves the new rows into the minutes, then
-- drops minutes that net to nothing; a caller that finds the move taken just sums both
-- tables, which is as exact. The move runs in a statement of its own after the lock, so
-- its snapshot sees what the previous move wrote; its sum is the minutes as they were plus
-- the rows it moved.
CREATE OR REPLACE FUNCTION webhookd.delivery_gauges(OUT pending bigint, OUT in_flight bigint, OUT unfinished_over_24h bigint)
 RETURNS record
 LANGUAGE plpgsql
 SET search_path TO 'webhookd'
AS $function$
#variable_conflict use_column
BEGIN
  IF pg_try_advisory_xact_lock(7252013) THEN
    WITH gone AS (
      DELETE FROM queue_counts RETURNING created_minute, pending, in_flight),
    moved AS (
      SELECT g.created_minute, sum(g.pending) AS pending, sum(g.in_flight) AS in_flight
        FROM gone g GROUP BY g.created_minute),
    merged AS (
      INSERT INTO queue_counts_by_minute AS m (created_minute, pending, in_flight)
        SELECT * FROM moved
        ON CONFLICT (created_minute) DO UPDATE
          SET pending = m.pending + excluded.pending, in_flight = m.in_flight + excluded.in_flight
        RETURNING 1),
    total AS (
      SELECT m.created_minute, m.pending, m.in_flight FROM queue_counts_by_minute m
      UNION ALL
      SELECT * FROM moved)
    SELECT coalesce(sum(t.pending), 0), coalesce(sum(t.in_flight), 0),
           coalesce(sum(t.pending + t.in_flight)
                      FILTER (WHERE t.created_minute < now() - interval '24 hours'), 0)
      INTO pending, in_flight, unfinished_over_24h FROM total t;
    -- A statement of its own: the one above cannot delete what it has just written.
    DELETE FROM queue_counts_by_minute WHERE pending = 0 AND in_flight = 0;
  ELSE
    SELECT coalesce(sum(t.pending), 0), coalesce(sum(t.in_flight), 0),
           coalesce(sum(t.pending + t.in_flight)
                      FILTER (WHERE t.created_minute < now() - interval '24 hours'), 0)
      INTO pending, in_flight, unfinished_over_24h
      FROM (SELECT created_minute, pending, in_flight FROM queue_counts_by_minute
            UNION ALL
            SELECT created_minute, pending, in_flight FROM queue_counts) t;
  END IF;
END
$function$;
