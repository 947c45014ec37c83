-- A feed's read (docs/feeds.md): up to $2 of destination $1's waiting messages, oldest
-- first, leased for $3 microseconds under token $4, in one statement. A lease is a claim
-- (claim_token and lease_until, migrations/0035_delivery_queue.sql), so the outcome
-- statement fences an ack by its token as it fences a worker's outcome, and a feed's
-- leases count where in-flight claims count.
--
-- Rows are read by the queue's indexes that begin with the destination
-- (delivery_queue_due; a fifo feed's heads by delivery_queue_fifo_due through
-- fifo_due_heads), so a read costs the same beside any number of other destinations.
-- SKIP LOCKED: two reads at once never wait for each other and never take the same row;
-- a row another read leased after this statement's snapshot fails `claim_token IS NULL`
-- when it is locked, and is left out.
-- $1 destination, $2 limit, $3 lease in microseconds, $4 lease token (negative:
-- store/pg/pg_delivery_queue.cc).
WITH feed AS (
  SELECT t.id, t.ordering = 'fifo' AS fifo, t.on_dead_letter = 'block' AS block,
         -- A destination pushed to that falls back to its feed (docs/feeds.md, "Fallback")
         -- hands out its due deliveries only while its circuit is not closed, besides those
         -- that fell back.
         t.url = 'feed:' OR t.circuit <> 'closed' AS due
    FROM destinations t
   WHERE t.id = $1::bigint AND (t.url = 'feed:' OR t.fallback = 'feed') AND t.enabled
     AND t.deleted_at IS NULL),
plain AS (
  SELECT d.id, d.next_attempt_at AS at FROM delivery_queue d
   WHERE d.destination_id = $1::bigint AND d.claim_token IS NULL AND d.next_attempt_at <= now()
     AND EXISTS (SELECT 1 FROM feed f WHERE NOT f.fifo AND f.due)
   ORDER BY d.destination_id, d.next_attempt_at LIMIT $2::int
     FOR UPDATE SKIP LOCKED),
-- A fifo feed hands out each key's head alone; the next of a key comes once it finishes.
heads AS (
  SELECT d.id, d.next_attempt_at AS at FROM delivery_queue d
   WHERE d.id IN (SELECT h.id FROM feed f CROSS JOIN LATERAL fifo_due_heads(f.id, f.block, $2::int) h
                   WHERE f.fifo AND f.due)
     AND d.claim_token IS NULL
   ORDER BY d.next_attempt_at, d.id LIMIT $2::int
     FOR UPDATE SKIP LOCKED),
-- What fell back to the feed is no push's any more (migrations/0043_feed_fallback.sql):
-- read by its own index, when its feed time has come. On a fifo destination each is its
-- key's head, as it stays unfinished.
fallen AS (
  SELECT d.id, d.feed_at AS at FROM delivery_queue d
   WHERE d.destination_id = $1::bigint AND d.feed_at IS NOT NULL AND d.claim_token IS NULL
     AND d.feed_at <= now() AND EXISTS (SELECT 1 FROM feed f)
   ORDER BY d.destination_id, d.feed_at LIMIT $2::int
     FOR UPDATE SKIP LOCKED),
chosen AS (
  SELECT x.id FROM (SELECT p.id, p.at FROM plain p UNION ALL SELECT h.id, h.at FROM heads h
                    UNION ALL SELECT f.id, f.at FROM fallen f) x
   ORDER BY x.at, x.id LIMIT $2::int),
leased AS (
  UPDATE delivery_queue q
     SET lease_until = now() + $3::bigint * interval '1 microsecond', claim_token = $4::bigint
   WHERE q.id IN (SELECT c.id FROM chosen c)
  RETURNING q.id, coalesce(q.feed_at, q.next_attempt_at) AS next_attempt_at, q.lease_until,
            q.ordering_key)
-- The columns of the claim (store/pg/schema/claim_due.sql) the worker's reader takes, then
-- the lease's end and the event's ordering key.
SELECT l.id, d.event_id, e.type, e.payload, e.created_at, t.id, t.url,
       concat_ws(' ', VARIADIC t.secret || ARRAY(
         SELECT s.secret FROM destination_secrets s
          WHERE s.destination_id = t.id AND s.expires_at > now()
          ORDER BY s.retired_at DESC)),
       t.headers::text, d.attempt_count, d.cycle_attempts, d.created_at, 'send', true,
       NULL::text, e.traceparent, e.tracestate, e.tenant_id, l.lease_until, l.ordering_key
  FROM leased l JOIN deliveries d ON d.id = l.id JOIN events e ON e.id = d.event_id
  JOIN destinations t ON t.id = $1::bigint
 ORDER BY l.next_attempt_at, l.id
