-- scripts/bench: deliveries not succeeded, by status, attempts and last error.
SELECT status, attempt_count, last_error, count(*) FROM deliveries
 WHERE status <> 'succeeded' GROUP BY 1, 2, 3;
