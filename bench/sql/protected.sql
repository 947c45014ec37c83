-- scripts/bench: :n due deliveries spread over ten destinations at the sink's /ok/1..10
-- and, when :others is 1, :m more (due first) to a destination whose circuit is open
-- (/open: never sent, each one recorded as a skip) and :m to one limited to :rate
-- attempts a second (/limited).
-- Variables: n, m, others, rate, sink (host:port), secret.
INSERT INTO destinations (url, secret, max_in_flight)
  SELECT 'http://' || :'sink' || '/ok/' || g, :'secret', 64 FROM generate_series(1, 10) g;
INSERT INTO destinations (url, secret, max_in_flight, circuit, consecutive_failures,
                          failing_since, next_probe_at, cooldown_us)
  SELECT 'http://' || :'sink' || '/open', :'secret', 64, 'open', 10, now(),
         now() + interval '1 hour', 3600000000
   WHERE :others = 1;
INSERT INTO destinations (url, secret, max_in_flight, rate_limit)
  SELECT 'http://' || :'sink' || '/limited', :'secret', 64, :rate WHERE :others = 1;
INSERT INTO events (type, payload)
  SELECT 'order.created', '{"id":' || g || ',"total":"9.99","currency":"EUR","customer":"cus_42"}'
    FROM generate_series(1, :n + 2 * :m * :others) g;
WITH d AS (
  SELECT array_agg(id ORDER BY id) FILTER (WHERE url LIKE '%/ok/%') AS ok,
         max(id) FILTER (WHERE url LIKE '%/open') AS open,
         max(id) FILTER (WHERE url LIKE '%/limited') AS limited
    FROM destinations)
INSERT INTO deliveries (event_id, destination_id)
  SELECT e.id,
         CASE WHEN (e.id & 68719476735) <= :m * :others THEN d.open
              WHEN (e.id & 68719476735) <= 2 * :m * :others THEN d.limited
              ELSE d.ok[1 + e.id % 10] END
    FROM events e, d;
-- Queued due now by the insert; the open and limited ones a minute earlier.
UPDATE delivery_queue q SET next_attempt_at = now() - interval '1 minute'
  FROM deliveries x WHERE x.id = q.id AND (x.event_id & 68719476735) <= 2 * :m * :others;
VACUUM ANALYZE;
CHECKPOINT;
