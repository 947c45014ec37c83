-- Feed messages whose lease ended without an ack or a nack (docs/feeds.md): each becomes a
-- failed attempt ("lease expired"), recorded under its lease token like any outcome, so an
-- ack that comes first wins and this one changes nothing. Read by the in-flight index the
-- sweeper reads, at most $1 at a time. On a destination that falls back to its feed, a
-- feed's lease is told from a worker's claim by its token, which is negative
-- (store/pg/pg_delivery_queue.cc).
-- $1 limit.
SELECT d.id, q.claim_token, d.event_id, d.attempt_count, d.cycle_attempts, d.created_at,
       false, q.destination_id
  FROM delivery_queue q JOIN destinations t ON t.id = q.destination_id
  JOIN deliveries d ON d.id = q.id
 WHERE q.claim_token IS NOT NULL AND q.lease_until < now()
   AND (t.url = 'feed:' OR (t.fallback = 'feed' AND q.claim_token < 0))
 LIMIT $1::int
