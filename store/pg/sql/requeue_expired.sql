-- The lease sweeper: a claim whose worker is gone returns to pending when its lease ends,
-- keeping its due time, so it is claimed again at once. A feed's lease that ends is a
-- failed attempt instead (expired_feed_leases.sql), written by the worker's outcome path;
-- on a destination that falls back to its feed, a feed's lease is the one whose token is
-- negative (store/pg/pg_delivery_queue.cc).
UPDATE delivery_queue q SET lease_until = NULL, claim_token = NULL
 WHERE q.claim_token IS NOT NULL AND q.lease_until < now()
   AND NOT EXISTS (SELECT 1 FROM destinations t
                    WHERE t.id = q.destination_id
                      AND (t.url = 'feed:' OR (t.fallback = 'feed' AND q.claim_token < 0)))
