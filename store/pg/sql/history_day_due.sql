-- The day of the history that retention drops next: one already being dropped (a round was
-- interrupted), else the oldest that ended before $1 (now less the retention, from the
-- caller's clock).
SELECT day::text FROM history_days
 WHERE detaching_since IS NOT NULL
    OR ((day + 1)::timestamp AT TIME ZONE 'UTC') <= $1::timestamptz
 ORDER BY detaching_since IS NULL, day
 LIMIT 1
