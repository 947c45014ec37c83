-- GET /v1/deliveries?status=… with no other filter: $1 the cursor (NULL: the first page),
-- $2 the status, $3 the page size.
--
-- Written so that only deliveries_status (status, id) yields the order. With list_deliveries'
-- `status = $3 ORDER BY id DESC` the planner walks the primary key backwards expecting each
-- status to be spread evenly over ids; but the newest deliveries are the unfinished ones, so
-- a page of succeeded deliveries skipped the whole backlog first (200,000 rows, 5,000
-- buffers, at 2 million deliveries). `= ANY (ARRAY[…])` forms no equivalence with a constant,
-- so ORDER BY status, id is an order the primary key cannot give: every page is an index
-- range of its own size, also
-- under a generic plan (the cursor bound is an index condition even when $1 is NULL).
SELECT id, event_id, destination_id, status, attempt_count, next_attempt_at, last_attempt_at,
       last_status_code, last_error, created_at, updated_at, tenant_id,
       ordering_key,
       CASE WHEN fifo AND status = 'pending'
            THEN fifo_blocked_by(id, destination_id, fifo, ordering_key, status) END
  FROM deliveries
 WHERE status = ANY (ARRAY[$2::text]) AND id < coalesce($1::bigint, 9223372036854775807)
 ORDER BY status DESC, id DESC LIMIT $3
