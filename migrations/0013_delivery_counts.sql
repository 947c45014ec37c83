-- The gauges (pending, in flight, unfinished for over 24 hours) without counting the
-- deliveries: counting a million pending rows took ~630 ms on every refresh. Every
-- statement that changes deliveries adds one row per creation minute to delivery_counts,
-- the net change it made (statement triggers over its transition tables, so the rule
-- lives here once whatever writes: ingest, publish(), the claim, outcomes, replays,
-- cancels, the lease sweep). Those rows are only ever inserted, so no writer waits on
-- another; delivery_gauges() moves them into delivery_counts_by_minute (one row per
-- minute that still has unfinished deliveries) as it reads, so a read costs the changes
-- since the last one plus the minutes with unfinished deliveries, never the deliveries.
-- A sum over a snapshot is the exact count in that snapshot: a change and its row
-- commit together.
CREATE TABLE webhookd.delivery_counts (
  created_minute  timestamptz NOT NULL,  -- the deliveries' created_at, to the minute
  pending         bigint NOT NULL,
  in_flight       bigint NOT NULL
);
CREATE TABLE webhookd.delivery_counts_by_minute (
  created_minute  timestamptz PRIMARY KEY,
  pending         bigint NOT NULL,
  in_flight       bigint NOT NULL
);

CREATE FUNCTION webhookd.count_inserted_deliveries() RETURNS trigger
  LANGUAGE plpgsql SET search_path = webhookd AS $$
BEGIN
  INSERT INTO delivery_counts (created_minute, pending, in_flight)
    SELECT date_trunc('minute', n.created_at), count(*) FILTER (WHERE n.status = 'pending'),
           count(*) FILTER (WHERE n.status = 'in_flight')
      FROM new_rows n WHERE n.status IN ('pending', 'in_flight') GROUP BY 1;
  RETURN NULL;
END
$$;

CREATE FUNCTION webhookd.count_updated_deliveries() RETURNS trigger
  LANGUAGE plpgsql SET search_path = webhookd AS $$
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
$$;

CREATE FUNCTION webhookd.count_deleted_deliveries() RETURNS trigger
  LANGUAGE plpgsql SET search_path = webhookd AS $$
BEGIN
  INSERT INTO delivery_counts (created_minute, pending, in_flight)
    SELECT date_trunc('minute', o.created_at), -count(*) FILTER (WHERE o.status = 'pending'),
           -count(*) FILTER (WHERE o.status = 'in_flight')
      FROM old_rows o WHERE o.status IN ('pending', 'in_flight') GROUP BY 1;
  RETURN NULL;
END
$$;

CREATE TRIGGER deliveries_counted_insert AFTER INSERT ON webhookd.deliveries
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION webhookd.count_inserted_deliveries();
CREATE TRIGGER deliveries_counted_update AFTER UPDATE ON webhookd.deliveries
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION webhookd.count_updated_deliveries();
CREATE TRIGGER deliveries_counted_delete AFTER DELETE ON webhookd.deliveries
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION webhookd.count_deleted_deliveries();
CREATE FUNCTION webhookd.count_truncated_deliveries() RETURNS trigger
  LANGUAGE plpgsql SET search_path = webhookd AS $$
BEGIN
  DELETE FROM delivery_counts;
  DELETE FROM delivery_counts_by_minute;
  RETURN NULL;
END
$$;
CREATE TRIGGER deliveries_counted_truncate AFTER TRUNCATE ON webhookd.deliveries
  FOR EACH STATEMENT EXECUTE FUNCTION webhookd.count_truncated_deliveries();

-- The rows there are now; CREATE TRIGGER locked deliveries against writes until this
-- migration commits, so none is counted twice or missed.
INSERT INTO webhookd.delivery_counts_by_minute (created_minute, pending, in_flight)
  SELECT date_trunc('minute', created_at), count(*) FILTER (WHERE status = 'pending'),
         count(*) FILTER (WHERE status = 'in_flight')
    FROM webhookd.deliveries WHERE status IN ('pending', 'in_flight') GROUP BY 1;

-- The gauges: pending, in flight, and unfinished deliveries created over 24 hours ago (to
-- the minute: a minute counts once it began over 24 hours ago). One caller at a time
-- moves the new rows into the minutes, then drops minutes that net to nothing; a caller that
-- finds the move taken just sums both tables, which is as exact. The move runs in a
-- statement of its own after the lock, so its snapshot sees what the previous move wrote;
-- its sum is the minutes as they were plus the rows it moved.
CREATE FUNCTION webhookd.delivery_gauges(OUT pending bigint, OUT in_flight bigint,
                                         OUT unfinished_over_24h bigint)
  LANGUAGE plpgsql VOLATILE SET search_path = webhookd AS $$
#variable_conflict use_column
BEGIN
  IF pg_try_advisory_xact_lock(7252013) THEN
    WITH gone AS (
      DELETE FROM delivery_counts RETURNING created_minute, pending, in_flight),
    moved AS (
      SELECT g.created_minute, sum(g.pending) AS pending, sum(g.in_flight) AS in_flight
        FROM gone g GROUP BY g.created_minute),
    merged AS (
      INSERT INTO delivery_counts_by_minute AS m (created_minute, pending, in_flight)
        SELECT * FROM moved
        ON CONFLICT (created_minute) DO UPDATE
          SET pending = m.pending + excluded.pending, in_flight = m.in_flight + excluded.in_flight
        RETURNING 1),
    total AS (
      SELECT m.created_minute, m.pending, m.in_flight FROM delivery_counts_by_minute m
      UNION ALL
      SELECT * FROM moved)
    SELECT coalesce(sum(t.pending), 0), coalesce(sum(t.in_flight), 0),
           coalesce(sum(t.pending + t.in_flight)
                      FILTER (WHERE t.created_minute < now() - interval '24 hours'), 0)
      INTO pending, in_flight, unfinished_over_24h FROM total t;
    -- A statement of its own: the one above cannot delete what it has just written.
    DELETE FROM delivery_counts_by_minute WHERE pending = 0 AND in_flight = 0;
  ELSE
    SELECT coalesce(sum(t.pending), 0), coalesce(sum(t.in_flight), 0),
           coalesce(sum(t.pending + t.in_flight)
                      FILTER (WHERE t.created_minute < now() - interval '24 hours'), 0)
      INTO pending, in_flight, unfinished_over_24h
      FROM (SELECT created_minute, pending, in_flight FROM delivery_counts_by_minute
            UNION ALL
            SELECT created_minute, pending, in_flight FROM delivery_counts) t;
  END IF;
END
$$;

-- The open-circuits gauge reads the few destinations whose circuit is not closed.
CREATE INDEX destinations_circuit_not_closed ON webhookd.destinations (id)
  WHERE circuit <> 'closed' AND enabled AND deleted_at IS NULL;
