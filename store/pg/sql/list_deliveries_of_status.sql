-- GET /v1/deliveries?status=… with no other filter: $1 the cursor (NULL: the first page),
-- $2 the status, $3 the page size.
--
-- Written so that only deliveries_status (status, id) yields the order. With list_deliveries'
-- `status = $3 ORDER BY id DESC` the planner walks the primary key backwards expecting each
-- status to be spread evenly over ids; but the newest deliveries are the unfinished ones, so
-- a page of succeeded deliveries skipped the whole backlog first (200,000 rows, 5,000
-- buffers, at 2 million deliveries). `= ANY (ARRAY[…])` forms no equivalence with a constant,
-- so ORDER BY status, id is an order the primary key cannot give: every page is an index
-- range of its own size, also under a generic plan (the cursor bound is an index
-- condition even when $1 is NULL).
SELECT * FROM delivery_rows
 WHERE status = ANY (ARRAY[$2::text]) AND id < coalesce($1::bigint, 9223372036854775807)
 ORDER BY status DESC, id DESC LIMIT $3
