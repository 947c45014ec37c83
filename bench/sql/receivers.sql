-- scripts/bench: :n due deliveries spread over :dests destinations at the sink's
-- /ok/slow/1..:dests, receivers that take a log-normal time to answer and fail 1 % of
-- requests with 503 (bench_sink's /slow/ mode). Each destination keeps webhookd's
-- default per-destination cap (max_in_flight unset).
-- Variables: n, dests, sink (host:port), secret.
INSERT INTO destinations (url, secret)
  SELECT 'http://' || :'sink' || '/ok/slow/' || g, :'secret' FROM generate_series(1, :dests) g;
INSERT INTO events (type, payload)
  SELECT 'order.created', '{"id":' || g || ',"total":"9.99","currency":"EUR","customer":"cus_42"}'
    FROM generate_series(1, :n) g;
WITH d AS (SELECT array_agg(id ORDER BY id) AS ids FROM destinations)
INSERT INTO deliveries (event_id, destination_id)
  SELECT e.id, d.ids[1 + e.id % :dests] FROM events e, d;
VACUUM ANALYZE;
CHECKPOINT;
