-- The console's chart: the window ending now cut into steps, oldest first; each point
-- counts the attempts (by outcome) and dead letters from its `at` up to the next one's.
-- $1: the window, $2: the step, both in microseconds; the window is a whole number of
-- steps (the API checks).
WITH p AS (
  SELECT now() - $1::bigint * interval '1 microsecond' AS start, ($1::bigint / $2::bigint)::int AS n),
a AS (
  SELECT floor(extract(epoch FROM x.started_at - p.start) * 1000000 / $2::bigint)::int AS i,
         count(*) AS attempts,
         count(*) FILTER (WHERE x.outcome = 'success') AS successes,
         count(*) FILTER (WHERE x.outcome IN ('retryable', 'permanent')) AS failures
    FROM attempts x, p WHERE x.started_at >= p.start GROUP BY 1),
d AS (
  SELECT floor(extract(epoch FROM x.dead_lettered_at - p.start) * 1000000 / $2::bigint)::int AS i,
         count(*) AS n
    FROM dead_letters x, p WHERE x.dead_lettered_at >= p.start GROUP BY 1)
SELECT p.start + g.i * $2::bigint * interval '1 microsecond', coalesce(a.attempts, 0),
       coalesce(a.successes, 0), coalesce(a.failures, 0), coalesce(d.n, 0)
  FROM p CROSS JOIN LATERAL generate_series(0, p.n - 1) AS g(i)
  LEFT JOIN a ON a.i = g.i LEFT JOIN d ON d.i = g.i
 ORDER BY g.i
