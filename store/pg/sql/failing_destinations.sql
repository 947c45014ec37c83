-- The live destinations with the most failed attempts (retryable and permanent) in the
-- minutes of the last $1 microseconds, at most $2, most first (the console's Overview).
-- The hours' rollups (migrations/0045_destination_stats_hours.sql), found by their index
-- by hour, name the destinations that failed at all in those hours; only their minutes
-- are then read (migrations/0044_destination_stats.sql), so the cost follows the failing
-- destinations, not every destination that had an outcome.
WITH bounds AS (
  SELECT date_bin('1 minute', now() - $1::bigint * interval '1 microsecond',
                  timestamptz 'epoch') AS since),
failed_hours AS (
  SELECT DISTINCT h.destination_id
    FROM bounds b
    JOIN destination_stats_hours h
      ON h.hour >= date_bin('1 hour', b.since, timestamptz 'epoch') AND h.hour <= now()
   WHERE h.retryable + h.permanent > 0),
minutes AS (
  SELECT f.destination_id, sum(s.retryable + s.permanent) AS failed,
         sum(s.succeeded) AS succeeded, sum(s.dead_lettered) AS dead_lettered
    FROM failed_hours f
   CROSS JOIN bounds b
    JOIN destination_stats s
      ON s.destination_id = f.destination_id AND s.minute >= b.since AND s.minute <= now()
   GROUP BY f.destination_id
  HAVING sum(s.retryable + s.permanent) > 0)
SELECT d.id, d.tenant_id, d.url, d.description, m.failed, m.succeeded, m.dead_lettered
  FROM minutes m
  JOIN destinations d ON d.id = m.destination_id AND d.deleted_at IS NULL
 ORDER BY m.failed DESC, d.id
 LIMIT $2
