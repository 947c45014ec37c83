-- A push destination's fallback to its own feed (docs/feeds.md, "Fallback"): what it
-- cannot deliver is put in its feed instead of being dead-lettered.
--
-- A delivery that fell back keeps its queue row, pending, but is no push's any more: its
-- next_attempt_at is 'infinity', so the claim's scan of a destination's due rows
-- (delivery_queue_due) stops before it and pays nothing for it, and `feed_at` is when the
-- feed may hand it out. Only fallen-back rows have one, so their index is as small as
-- they are few.
ALTER TABLE webhookd.destinations
  ADD COLUMN fallback text CONSTRAINT destinations_fallback_check CHECK (fallback = 'feed');
ALTER TABLE webhookd.delivery_queue ADD COLUMN feed_at timestamptz;
CREATE INDEX delivery_queue_fallen
  ON webhookd.delivery_queue (destination_id, feed_at)
  WHERE feed_at IS NOT NULL AND claim_token IS NULL;
