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
SELECT * FROM (
  (SELECT r.* FROM delivery_queue q JOIN delivery_rows r ON r.id = q.id
    WHERE $2::text IN ('pending', 'in_flight')
      AND (q.claim_token IS NULL) = ($2::text = 'pending')
      AND q.id < coalesce($1::bigint, 9223372036854775807)
    ORDER BY q.id DESC LIMIT $3)
  UNION ALL
  (SELECT r.* FROM deliveries d JOIN delivery_rows r ON r.id = d.id
    WHERE $2::text IN ('dead_lettered', 'cancelled') AND d.stopped_as = $2::text
      AND d.id < coalesce($1::bigint, 9223372036854775807)
    ORDER BY d.stopped_as DESC, d.id DESC LIMIT $3)
  UNION ALL
  (SELECT r.* FROM attempts a JOIN delivery_rows r ON r.id = a.delivery_id
    WHERE $2::text = 'succeeded' AND a.outcome = 'success' AND r.status = 'succeeded'
      AND a.delivery_id < coalesce($1::bigint, 9223372036854775807)
    ORDER BY a.delivery_id DESC LIMIT $3)) page
 ORDER BY id DESC LIMIT $3
