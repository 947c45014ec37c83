-- A fifo destination's keys take turns. Walking the keys from the first in key order at
-- every claim served the keys that sort first again as soon as their delivery finished,
-- and read past the index entries of every delivery already sent. Each fifo destination
-- remembers the key of the last head its latest claim took; the next walk begins after
-- it, goes to the last key, wraps to the first and stops at it. What is in flight cannot
-- stand in for that place: against a fast receiver a claim's deliveries have all
-- finished by the next claim.
CREATE OR REPLACE FUNCTION webhookd.fifo_due_heads(dest bigint, block boolean, want integer)
 RETURNS TABLE(id bigint, next_attempt_at timestamp with time zone)
 LANGUAGE plpgsql
 SET search_path TO 'webhookd'
AS $function$
#variable_conflict use_column
DECLARE
  start_after text;  -- the walk's first key is the first greater than this one
  heads bigint[];
  stopped_at text;  -- the key of the last head this walk took
BEGIN
  SELECT t.last_key INTO start_after FROM fifo_turns t WHERE t.destination_id = dest;
  -- keys(k, wrapped, n): from the first key after start_after to the last, then (wrapped)
  -- from the first key on, up to start_after; n is the walk's order. None remembered:
  -- every key, in order. Evaluated only as far as the LIMIT needs (0018).
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
    SELECT h.id, keys.k, keys.n FROM keys CROSS JOIN LATERAL (
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
  SELECT array_agg(due.id), (array_agg(due.k ORDER BY due.n DESC))[1] INTO heads, stopped_at
    FROM due;
  IF stopped_at IS NOT NULL THEN
    INSERT INTO fifo_turns AS t (destination_id, last_key) VALUES (dest, stopped_at)
      ON CONFLICT (destination_id) DO UPDATE SET last_key = excluded.last_key;
  END IF;
  -- Locked like the plain branch's rows; one locked elsewhere waits for the next claim.
  RETURN QUERY
  SELECT d.id, d.next_attempt_at FROM delivery_queue d
   WHERE d.id = ANY (heads) AND d.claim_token IS NULL;
END
$function$;
