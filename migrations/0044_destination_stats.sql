-- Each destination's outcomes per minute (docs/api.md, GET /v1/destinations/{id}/stats),
-- kept as rollups that the outcome statements add to (store/pg/sql/record_outcomes.sql,
-- record_successes.sql), so that a month of a busy destination is read as its 43,200
-- minutes, never as its attempts.
--
-- A row is one destination's minute as seen by one writer's connection (`slot`, the
-- writer's backend pid modulo 4): two outcome writers (a worker's recorders) would
-- otherwise wait on one row for each other's commit; a reader sums the slots.
--
-- `latency` counts the attempts of the minute by duration in 32 bins of half an octave:
-- bin i holds a duration d (milliseconds) with 2^(i/2) <= d + 1 < 2^((i+1)/2), the last
-- bin everything from 46,340 ms on (store/pg/schema/latency_histogram.sql). Bins add up
-- exactly, so a percentile of any window is read from its bin, within a factor 2^(1/4)
-- (19 %) or 2 ms of the true value (core/destination_stats.h).
--
-- Partitioned by day of `minute` (UTC) beside the history's days
-- (migrations/0038_history_days.sql): webhookd.add_history_days creates a day's
-- partition with the history's, and retention detaches and drops it with them. The fill
-- factor leaves room on each page, so that adding to a row is a HOT update.
CREATE TABLE webhookd.destination_stats (
  destination_id  bigint NOT NULL,
  minute          timestamptz NOT NULL,
  slot            smallint NOT NULL,
  succeeded       integer NOT NULL DEFAULT 0,
  retryable       integer NOT NULL DEFAULT 0,
  permanent       integer NOT NULL DEFAULT 0,
  dead_lettered   integer NOT NULL DEFAULT 0,
  latency         integer[] NOT NULL,
  CONSTRAINT destination_stats_pkey PRIMARY KEY (destination_id, minute, slot))
PARTITION BY RANGE (minute);

-- A partition for each day the history has now; later days come with theirs.
DO $$
DECLARE
  d date;
BEGIN
  FOR d IN SELECT h.day FROM webhookd.history_days h ORDER BY h.day LOOP
    EXECUTE format('CREATE TABLE webhookd.%I PARTITION OF webhookd.destination_stats'
                   ' FOR VALUES FROM (%L) TO (%L) WITH (fillfactor = 70)',
                   'destination_stats_p' || to_char(d, 'YYYYMMDD'),
                   (d::timestamp AT TIME ZONE 'UTC'), ((d + 1)::timestamp AT TIME ZONE 'UTC'));
  END LOOP;
END
$$;
