-- Which of the feeds $1 have a message a read could lease now (server/feed_waiters.h): a
-- wake-up of the channel asks this once for every waiting read, and wakes the reads of
-- the feeds it names. The conditions are lease_feed.sql's, less its fifo heads: a fifo
-- feed whose head is leased is named, and its reads lease nothing and wait again. Each
-- feed is two lookups of the queue's indexes that begin with the destination.
SELECT t.id
  FROM destinations t
 WHERE t.id = ANY($1::bigint[]) AND (t.url = 'feed:' OR t.fallback = 'feed') AND t.enabled
   AND t.deleted_at IS NULL
   AND ((t.url = 'feed:' OR t.circuit <> 'closed')
        AND EXISTS (SELECT 1 FROM delivery_queue d
                     WHERE d.destination_id = t.id AND d.claim_token IS NULL
                       AND d.next_attempt_at <= now())
        OR EXISTS (SELECT 1 FROM delivery_queue d
                    WHERE d.destination_id = t.id AND d.feed_at IS NOT NULL
                      AND d.claim_token IS NULL AND d.feed_at <= now()))
