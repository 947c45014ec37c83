-- A fifo destination's keys take turns. fifo_due_heads (0018) walked the keys from the
-- first in key order at every claim and took the first due heads it met, so the keys
-- that sort first were served again as soon as their delivery finished: with 100,000
-- deliveries over 1,000 keys, a quarter of the way through the first hundred keys were
-- done and others had sent nothing. And every claim began its walk at the first key,
-- past the index entries of every delivery already sent (dead until a VACUUM: 140
-- buffers a claim a quarter of the way, growing as the drain went on).
--
-- Each fifo destination now remembers the key of the last head its latest claim took,
-- and the next walk begins after it, goes to the last key, wraps to the first and stops
-- at it. What is in flight cannot stand in for that place: against a fast receiver a
-- claim's deliveries have all finished by the next claim.
--
-- And the walk reads an index of pending deliveries alone. Each key's head is its oldest
-- pending delivery when nothing of its key is in flight (the test the walk made anyway),
-- which is the oldest unfinished one; an index of unfinished ones also kept an entry for
-- each delivery's time in flight, dead once it finished, and every probe stepped over
-- both. Measured (100,000 deliveries over 1,000 keys, one worker): 94 buffers a delivery
-- before, 87 after; the drain's rate 0.75 of the same deliveries unordered before, ~0.9
-- after.
--
-- Which heads are due is unchanged, and so is fifo_blocked_by's answer (below): a key
-- still goes in order; the keys only go in turn.
CREATE INDEX deliveries_fifo_pending
  ON webhookd.deliveries (destination_id, (coalesce(ordering_key, '')), id)
  WHERE fifo AND status = 'pending';
DROP INDEX webhookd.deliveries_fifo_unfinished;

CREATE TABLE webhookd.fifo_turns (
  destination_id bigint PRIMARY KEY REFERENCES webhookd.destinations ON DELETE CASCADE,
  last_key text NOT NULL);

CREATE OR REPLACE FUNCTION webhookd.fifo_due_heads(dest bigint, block boolean, want int)
  RETURNS TABLE (id bigint, next_attempt_at timestamptz)
  LANGUAGE plpgsql VOLATILE SET search_path = webhookd AS $$
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
    SELECT coalesce(f.k, (SELECT coalesce(x.ordering_key, '') FROM deliveries x
                           WHERE x.destination_id = dest AND x.fifo
                             AND x.status = 'pending'
                           ORDER BY coalesce(x.ordering_key, '') LIMIT 1)),
           f.k IS NULL, 1
      FROM (SELECT (SELECT coalesce(x.ordering_key, '') FROM deliveries x
                     WHERE x.destination_id = dest AND x.fifo
                       AND x.status = 'pending'
                       AND coalesce(x.ordering_key, '') > start_after
                     ORDER BY coalesce(x.ordering_key, '') LIMIT 1) AS k) f
    UNION ALL
    SELECT coalesce(s.k, CASE WHEN NOT keys.wrapped THEN (
             SELECT coalesce(x.ordering_key, '') FROM deliveries x
              WHERE x.destination_id = dest AND x.fifo
                AND x.status = 'pending'
              ORDER BY coalesce(x.ordering_key, '') LIMIT 1) END),
           keys.wrapped OR s.k IS NULL, keys.n + 1
      FROM keys CROSS JOIN LATERAL (
        SELECT (SELECT coalesce(x.ordering_key, '') FROM deliveries x
                 WHERE x.destination_id = dest AND x.fifo
                   AND x.status = 'pending'
                   AND coalesce(x.ordering_key, '') > keys.k
                 ORDER BY coalesce(x.ordering_key, '') LIMIT 1) AS k) s
     WHERE keys.k IS NOT NULL
       AND (NOT keys.wrapped OR start_after IS NULL OR keys.k < start_after)),
  due AS (
    SELECT h.id, keys.k, keys.n FROM keys CROSS JOIN LATERAL (
      SELECT x.id, x.next_attempt_at FROM deliveries x
       WHERE x.destination_id = dest AND x.fifo AND coalesce(x.ordering_key, '') = keys.k
         AND x.status = 'pending'
       ORDER BY coalesce(x.ordering_key, ''), x.id LIMIT 1) h
     WHERE keys.k IS NOT NULL
       AND (NOT keys.wrapped OR start_after IS NULL OR keys.k <= start_after)
       AND h.next_attempt_at <= now()
       AND NOT EXISTS (SELECT 1 FROM deliveries f
                        WHERE f.destination_id = dest AND f.fifo AND f.status = 'in_flight'
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
  SELECT d.id, d.next_attempt_at FROM deliveries d
   WHERE d.id = ANY (heads) AND d.status = 'pending'
     FOR UPDATE OF d SKIP LOCKED;
END
$$;

-- What a waiting delivery waits for, as 0018 answers it: the oldest unfinished delivery
-- of its key before it (now the older of its oldest pending one and its oldest in flight
-- before it), else the oldest of its key in flight (0018 named any one of them), else
-- (under 'block') the earliest open dead letter's delivery of its key before it.
CREATE OR REPLACE FUNCTION webhookd.fifo_blocked_by(delivery bigint, dest bigint, fifo boolean,
                                                    key text, status text)
  RETURNS bigint LANGUAGE sql STABLE SET search_path = webhookd AS $$
  SELECT CASE WHEN NOT fifo OR status <> 'pending' THEN NULL ELSE (
    SELECT coalesce(
             (SELECT min(u.id) FROM (
                (SELECT x.id FROM deliveries x
                  WHERE x.destination_id = dest AND x.fifo AND x.status = 'pending'
                    AND coalesce(x.ordering_key, '') = coalesce(key, '') AND x.id < delivery
                  ORDER BY coalesce(x.ordering_key, ''), x.id LIMIT 1)
                UNION ALL
                (SELECT min(x.id) FROM deliveries x
                  WHERE x.destination_id = dest AND x.fifo AND x.status = 'in_flight'
                    AND coalesce(x.ordering_key, '') = coalesce(key, '')
                    AND x.id < delivery)) u),
             (SELECT min(x.id) FROM deliveries x
               WHERE x.destination_id = dest AND x.fifo AND x.status = 'in_flight'
                 AND coalesce(x.ordering_key, '') = coalesce(key, '')),
             CASE WHEN t.on_dead_letter = 'block' THEN
               (SELECT l.delivery_id FROM dead_letters l JOIN deliveries b ON b.id = l.delivery_id
                 WHERE l.destination_id = dest AND l.replayed_at IS NULL
                   AND l.dismissed_at IS NULL AND l.delivery_id < delivery
                   AND coalesce(b.ordering_key, '') = coalesce(key, '')
                 ORDER BY l.delivery_id LIMIT 1) END)
      FROM destinations t WHERE t.id = dest AND t.ordering = 'fifo') END
$$;
