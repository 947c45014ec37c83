-- One feed's queued messages (GET /v1/destinations/{id}/messages/counts): waiting for a
-- read and leased to one, as feed_message_counts.sql counts every feed for the gauge. A
-- destination pushed to that falls back to its feed ($2 false) counts what fell back to
-- it. Read by the queue's index that begins with the destination.
SELECT count(*) FILTER (WHERE q.claim_token IS NULL),
       count(*) FILTER (WHERE q.claim_token IS NOT NULL)
  FROM delivery_queue q
 WHERE q.destination_id = $1 AND ($2::boolean OR q.feed_at IS NOT NULL)
