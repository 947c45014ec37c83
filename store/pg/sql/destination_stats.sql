-- A destination's rollups in buckets of $5 microseconds from $3 (aligned to the step by
-- the caller) to before $4: every bucket, with zeros where nothing happened, and each
-- bucket's latency bins summed over its rows and their slots. $6 false reads the minutes
-- (migrations/0044_destination_stats.sql); true (a step of whole hours from a whole
-- hour) reads the hours (0045_destination_stats_hours.sql) up to the hour that holds $4
-- and the minutes of that last, partial hour. The rows are one range of the key
-- (destination, minute or hour) each, binned and summed once: a month is its 720 hours
-- (2,880 rows at most), and a window of minutes is at most 1,000 buckets of 5 minutes.
-- Every bound is a parameter, so the plan reads only the days of the window. No row when
-- the destination is not one the caller sees ($2: the caller's tenant, NULL: any), as
-- get_destination.sql.
WITH dst AS (
  SELECT d.id FROM destinations d
   WHERE d.id = $1 AND d.deleted_at IS NULL AND ($2::text IS NULL OR d.tenant_id = $2)),
rows AS (
  SELECT m.minute AS at, m.succeeded, m.retryable, m.permanent, m.dead_lettered, m.latency
    FROM destination_stats m
   WHERE m.destination_id = (SELECT id FROM dst)
     AND m.minute >= CASE WHEN $6::boolean
                          THEN greatest($3::timestamptz,
                                        date_bin('1 hour', $4::timestamptz, timestamptz 'epoch'))
                          ELSE $3::timestamptz END
     AND m.minute < $4::timestamptz
  UNION ALL
  SELECT h.hour, h.succeeded, h.retryable, h.permanent, h.dead_lettered, h.latency
    FROM destination_stats_hours h
   WHERE $6::boolean AND h.destination_id = (SELECT id FROM dst) AND h.hour >= $3::timestamptz
     AND h.hour < date_bin('1 hour', $4::timestamptz, timestamptz 'epoch')),
b AS (
  SELECT date_bin($5::bigint * interval '1 microsecond', s.at, $3::timestamptz) AS start,
         sum(s.succeeded) AS succeeded, sum(s.retryable) AS retryable,
         sum(s.permanent) AS permanent, sum(s.dead_lettered) AS dead_lettered,
         ARRAY[
           sum(s.latency[1]), sum(s.latency[2]), sum(s.latency[3]), sum(s.latency[4]),
           sum(s.latency[5]), sum(s.latency[6]), sum(s.latency[7]), sum(s.latency[8]),
           sum(s.latency[9]), sum(s.latency[10]), sum(s.latency[11]), sum(s.latency[12]),
           sum(s.latency[13]), sum(s.latency[14]), sum(s.latency[15]), sum(s.latency[16]),
           sum(s.latency[17]), sum(s.latency[18]), sum(s.latency[19]), sum(s.latency[20]),
           sum(s.latency[21]), sum(s.latency[22]), sum(s.latency[23]), sum(s.latency[24]),
           sum(s.latency[25]), sum(s.latency[26]), sum(s.latency[27]), sum(s.latency[28]),
           sum(s.latency[29]), sum(s.latency[30]), sum(s.latency[31]), sum(s.latency[32])] AS latency
    FROM rows s
   GROUP BY 1)
SELECT g.start, coalesce(b.succeeded, 0), coalesce(b.retryable, 0), coalesce(b.permanent, 0),
       coalesce(b.dead_lettered, 0), b.latency::text
  FROM dst
 CROSS JOIN generate_series($3::timestamptz, $4::timestamptz - interval '1 microsecond',
                            $5::bigint * interval '1 microsecond') g(start)
  LEFT JOIN b ON b.start = g.start
 ORDER BY g.start
