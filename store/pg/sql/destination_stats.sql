-- A destination's rollups (migrations/0044_destination_stats.sql) in buckets of $5
-- microseconds from $3 (aligned to the step by the caller) to before $4: every bucket, with
-- zeros where nothing happened, and each bucket's latency bins summed over its minutes and
-- their slots. Each bucket is its own range of the key (destination, minute), summed as it
-- is read: no sort and no hash of a month's rows, whatever the step. No row when the
-- destination is not one the caller sees ($2: the caller's tenant, NULL: any), as
-- get_destination.sql.
WITH dst AS (
  SELECT d.id FROM destinations d
   WHERE d.id = $1 AND d.deleted_at IS NULL AND ($2::text IS NULL OR d.tenant_id = $2))
SELECT g.start, coalesce(b.succeeded, 0), coalesce(b.retryable, 0), coalesce(b.permanent, 0),
       coalesce(b.dead_lettered, 0), b.latency::text
  FROM dst
 CROSS JOIN generate_series($3::timestamptz, $4::timestamptz - interval '1 microsecond',
                            $5::bigint * interval '1 microsecond') g(start)
 CROSS JOIN LATERAL (
  SELECT sum(s.succeeded) AS succeeded, sum(s.retryable) AS retryable,
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
    FROM destination_stats s
   WHERE s.destination_id = dst.id AND s.minute >= g.start
     AND s.minute < least(g.start + $5::bigint * interval '1 microsecond', $4::timestamptz)) b
 ORDER BY g.start
