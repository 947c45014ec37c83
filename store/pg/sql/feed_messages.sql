-- The messages of feed $1 that events $2 made, as an ack or a nack finds them: each
-- delivery with its lease token and whether a read's lease on it still runs (no token:
-- not leased, or the sweeper ended its lease). A delivery no longer queued is finished: no
-- row. On a destination that falls back to its feed (docs/feeds.md, "Fallback") a worker's
-- claim is no read's lease: only a negative token is a read's (store/pg/pg_delivery_queue.cc).
-- $1 destination, $2 event ids.
SELECT d.id, q.claim_token, d.event_id, d.attempt_count, d.cycle_attempts, d.created_at,
       q.claim_token IS NOT NULL AND q.lease_until > now()
         AND (q.claim_token < 0
              OR EXISTS (SELECT 1 FROM destinations t WHERE t.id = $1::bigint AND t.url = 'feed:'))
  FROM deliveries d JOIN delivery_queue q ON q.id = d.id
 WHERE d.event_id = ANY ($2::bigint[]) AND d.destination_id = $1::bigint
