-- Each destination's outcomes per hour: the rollups of migrations/0044_destination_stats.sql
-- again, a row per destination, hour and writer slot, added to by the same outcome
-- statements (store/pg/sql/record_outcomes.sql, record_successes.sql). A month of a busy
-- destination in buckets of an hour or a day is then read as its 720 hours (at most four
-- rows each), not its 43,200 minutes: GET /v1/destinations/{id}/stats reads this table
-- for a step of 1h or 1d and the minutes for 1m and 5m (store/pg/sql/destination_stats*.sql).
--
-- The index by hour finds the destinations that had outcomes in a window without reading
-- every destination's rows (GET /v1/admin/stats/failing). `hour` never changes, so adding
-- to a row stays a HOT update.
--
-- Partitioned by day of `hour` (UTC), made, detached and dropped with the history's days
-- as the minutes are.
CREATE TABLE webhookd.destination_stats_hours (
  destination_id  bigint NOT NULL,
  hour            timestamptz NOT NULL,
  slot            smallint NOT NULL,
  succeeded       integer NOT NULL DEFAULT 0,
  retryable       integer NOT NULL DEFAULT 0,
  permanent       integer NOT NULL DEFAULT 0,
  dead_lettered   integer NOT NULL DEFAULT 0,
  latency         integer[] NOT NULL,
  CONSTRAINT destination_stats_hours_pkey PRIMARY KEY (destination_id, hour, slot))
PARTITION BY RANGE (hour);

CREATE INDEX destination_stats_hours_by_hour ON webhookd.destination_stats_hours (hour);

-- A partition for each day the history has now, filled from the minutes it already has.
DO $$
DECLARE
  d date;
BEGIN
  FOR d IN SELECT h.day FROM webhookd.history_days h ORDER BY h.day LOOP
    EXECUTE format('CREATE TABLE webhookd.%I PARTITION OF webhookd.destination_stats_hours'
                   ' FOR VALUES FROM (%L) TO (%L) WITH (fillfactor = 70)',
                   'destination_stats_hours_p' || to_char(d, 'YYYYMMDD'),
                   (d::timestamp AT TIME ZONE 'UTC'), ((d + 1)::timestamp AT TIME ZONE 'UTC'));
  END LOOP;
END
$$;

INSERT INTO webhookd.destination_stats_hours (destination_id, hour, slot, succeeded, retryable,
                                              permanent, dead_lettered, latency)
SELECT s.destination_id, date_bin('1 hour', s.minute, timestamptz 'epoch'), s.slot, sum(s.succeeded),
       sum(s.retryable), sum(s.permanent), sum(s.dead_lettered),
       ARRAY(SELECT sum(b.n)::integer FROM unnest(array_agg(s.latency)) WITH ORDINALITY b(n, i)
              GROUP BY (b.i - 1) % 32 ORDER BY (b.i - 1) % 32)
  FROM webhookd.destination_stats s
 GROUP BY 1, 2, 3;
