-- A fifo destination's keys take turns. Walking the keys from the first in key order at
-- every claim served the keys that sort first again as soon as their delivery finished,
-- and read past the index entries of every delivery already sent. Each fifo destination
-- remembers the key of the last head its latest claim took; the next walk begins after
-- it, goes to the last key, wraps to the first and stops at it. What is in flight cannot
-- stand in for that place: against a fast receiver a claim's deliveries have all
-- finished by the next claim.
--
-- Each head comes with its key and its place in the walk: the claim remembers the last
-- one's key (fifo_turns) itself. The function is STABLE, so it reads with the claim's own
-- snapshot. A volatile one took a snapshot of its own, later than the claim's: a retry
-- written in between was offered as a head while the claim still read the delivery's
-- attempt count from before it, so the retry was sent under the attempt number it had
-- already failed with, and its outcome could never be written.
CREATE OR REPLACE FUNCTION webhookd.fifo_due_heads(dest bigint, block boolean, want integer)
 RETURNS TABLE(id bigint, next_attempt_at timestamp with time zone, ordering_key text, walk integer)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'webhookd'
AS $function$
#variable_conflict use_column
DECLARE
  start_after text;  -- the walk's first key is the first greater than this one
BEGIN
  SELECT t.last_key INTO start_after FROM fifo_turns t WHERE t.destination_id = dest;
  -- keys(k, wrapped, n): from the first key after start_after to the last, then (wrapped)
  -- from the first key on, up to start_after; n is the walk's order. None remembered:
  -- every key, in order. Evaluated only as far as the LIMIT needs (0018).
  RETURN QUERY
  WITH RECURSIVE keys(k, wrapped, n) AS (
    SELECT coalesce(f.k, (SELECT coalesce(x.ordering_key, '') FROM delivery_queue x
                           WHERE x.destination_id = dest AND x.fifo
                             AND x.claim_token IS NULL
                           ORDER BY coalesce(x.ordering_key, '') LIMIT 1)),
           f.k IS NULL, 1
      FROM (SELECT (SELECT coalesce(x.ordering_key, '') FROM delivery_queue x
                     WHERE x.destination_id = dest AND x.fifo
                       AND x.claim_token IS NULL
                       AND coalesce(x.ordering_key, '') > start_after
                     ORDER BY coalesce(x.ordering_key, '') LIMIT 1) AS k) f
    UNION ALL
    SELECT coalesce(s.k, CASE WHEN NOT keys.wrapped THEN (
             SELECT coalesce(x.ordering_key, '') FROM delivery_queue x
              WHERE x.destination_id = dest AND x.fifo
                AND x.claim_token IS NULL
              ORDER BY coalesce(x.ordering_key, '') LIMIT 1) END),
           keys.wrapped OR s.k IS NULL, keys.n + 1
      FROM keys CROSS JOIN LATERAL (
        SELECT (SELECT coalesce(x.ordering_key, '') FROM delivery_queue x
                 WHERE x.destination_id = dest AND x.fifo
                   AND x.claim_token IS NULL
                   AND coalesce(x.ordering_key, '') > keys.k
                 ORDER BY coalesce(x.ordering_key, '') LIMIT 1) AS k) s
     WHERE keys.k IS NOT NULL
       AND (NOT keys.wrapped OR start_after IS NULL OR keys.k < start_after)),
  due AS (
    SELECT h.id, h.next_attempt_at, keys.k, keys.n FROM keys CROSS JOIN LATERAL (
      SELECT x.id, x.next_attempt_at FROM delivery_queue x
       WHERE x.destination_id = dest AND x.fifo AND coalesce(x.ordering_key, '') = keys.k
         AND x.claim_token IS NULL
       ORDER BY coalesce(x.ordering_key, ''), x.id LIMIT 1) h
     WHERE keys.k IS NOT NULL
       AND (NOT keys.wrapped OR start_after IS NULL OR keys.k <= start_after)
       AND h.next_attempt_at <= now()
       AND NOT EXISTS (SELECT 1 FROM delivery_queue f
                        WHERE f.destination_id = dest AND f.fifo AND f.claim_token IS NOT NULL
                          AND coalesce(f.ordering_key, '') = keys.k)
       AND NOT (block AND EXISTS (
             SELECT 1 FROM dead_letters l JOIN deliveries b ON b.id = l.delivery_id
              WHERE l.destination_id = dest AND l.replayed_at IS NULL
                AND l.dismissed_at IS NULL AND l.delivery_id < h.id
                AND coalesce(b.ordering_key, '') = keys.k))
     LIMIT want)
  SELECT due.id, due.next_attempt_at, due.k, due.n FROM due;
END
$function$;
