-- $1: the window in microseconds.
WITH a AS (
  SELECT count(*) AS attempts,
         count(*) FILTER (WHERE outcome = 'retryable') AS retryable,
         count(*) FILTER (WHERE outcome = 'success') AS successes,
         coalesce(avg(attempt_number) FILTER (WHERE outcome = 'success'), 0)::float8 AS avg_success,
         count(*) FILTER (WHERE attempt_number = 2) AS second,
         count(*) FILTER (WHERE attempt_number = 2 AND outcome = 'success') AS second_ok
    FROM attempts WHERE started_at >= now() - $1::bigint * interval '1 microsecond'),
dl AS (
  SELECT count(*) AS n FROM dead_letters
   WHERE dead_lettered_at >= now() - $1::bigint * interval '1 microsecond'),
g AS (
  SELECT pending, in_flight, unfinished_over_24h AS old FROM delivery_gauges())
SELECT a.attempts, a.retryable, a.successes, a.avg_success, a.second, a.second_ok, dl.n,
       g.pending, g.in_flight, g.old
  FROM a, dl, g
