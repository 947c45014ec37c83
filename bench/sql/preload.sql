-- scripts/bench: :n due deliveries spread over three destinations at the sink's /ok/1..3
-- (max_in_flight :cap) and, when :slow > 0, :slow more (due first) to a fourth at /hang
-- (cap 16).
-- Variables: n, slow, cap, sink (host:port), secret.
-- An id carries its day in its high bits (store/pg/schema/history_id.sql): the first :slow
-- events are those whose low 36 bits, the sequence's number on a fresh database, are <= :slow.
INSERT INTO destinations (url, secret, max_in_flight)
  SELECT 'http://' || :'sink' || '/ok/' || g, :'secret', :cap FROM generate_series(1, 3) g;
INSERT INTO destinations (url, secret, max_in_flight)
  SELECT 'http://' || :'sink' || '/hang', :'secret', 16 WHERE :slow > 0;
INSERT INTO events (type, payload)
  SELECT 'order.created', '{"id":' || g || ',"total":"9.99","currency":"EUR","customer":"cus_42"}'
    FROM generate_series(1, :n + :slow) g;
WITH d AS (
  SELECT array_agg(id ORDER BY id) FILTER (WHERE url LIKE '%/ok/%') AS ok,
         max(id) FILTER (WHERE url LIKE '%/hang') AS hang
    FROM destinations)
INSERT INTO deliveries (event_id, destination_id)
  SELECT e.id, CASE WHEN (e.id & 68719476735) <= :slow THEN d.hang ELSE d.ok[1 + e.id % 3] END
    FROM events e, d;
-- Queued due now by the insert; the slow ones a minute earlier, so they are claimed first.
UPDATE delivery_queue q SET next_attempt_at = now() - interval '1 minute'
  FROM deliveries x WHERE x.id = q.id AND (x.event_id & 68719476735) <= :slow;
VACUUM ANALYZE;
CHECKPOINT;
