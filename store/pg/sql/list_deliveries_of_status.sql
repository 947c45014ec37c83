-- GET /v1/deliveries?status=… with no other filter: $1 the cursor (NULL: the first page),
-- $2 the status, $3 the page size.
--
-- The history has no index on status (an outcome that changed an indexed column could
-- not be a HOT update), so each status is read where it is an index range of the page's
-- own size; only the branch of $2 runs (each has a one-time filter):
-- - pending, in flight: the queue, newest first (it holds only unfinished deliveries);
-- - dead-lettered, cancelled: deliveries_stopped, the few that stopped without success,
--   by the status they stopped as;
-- - succeeded: attempts_succeeded, as every success records one attempt.
--
-- The page's ids are chosen first, each branch by its own index, and only then is each
-- one's row read, by a lateral lookup that reads the day of its id only (pruned as it
-- runs). With the history in a partition per day, a join by id is planned as a probe of
-- every day per row, which made a hash of every day look cheaper.
WITH page AS MATERIALIZED (
  (SELECT q.id FROM delivery_queue q
    WHERE $2::text IN ('pending', 'in_flight')
      AND (q.claim_token IS NULL) = ($2::text = 'pending')
      AND q.id < coalesce($1::bigint, 9223372036854775807)
    ORDER BY q.id DESC LIMIT $3)
  UNION ALL
  (SELECT d.id FROM deliveries d
    WHERE $2::text IN ('dead_lettered', 'cancelled') AND d.stopped_as = $2::text
      AND d.id < coalesce($1::bigint, 9223372036854775807)
    ORDER BY d.stopped_as DESC, d.id DESC LIMIT $3)
  UNION ALL
  (SELECT a.delivery_id FROM attempts a
    WHERE $2::text = 'succeeded' AND a.outcome = 'success'
      AND a.delivery_id < coalesce($1::bigint, 9223372036854775807)
      AND NOT EXISTS (SELECT 1 FROM delivery_queue q WHERE q.id = a.delivery_id)
    ORDER BY a.delivery_id DESC LIMIT $3))
SELECT r.* FROM page
 CROSS JOIN LATERAL (SELECT * FROM delivery_rows x WHERE x.id = page.id LIMIT 1) r
 ORDER BY r.id DESC
