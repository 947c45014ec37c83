-- scripts/bench: :n due deliveries spread over three destinations of a broker: the URLs
-- :url1, :url2 and :url3 (one connection each) with the settings (JSON) :broker1,
-- :broker2 and :broker3.
-- Variables: n, url1, url2, url3, broker1, broker2, broker3, secret.
INSERT INTO destinations (url, secret, max_in_flight, broker)
  SELECT u, :'secret', 64, b::jsonb
    FROM unnest(ARRAY[:'url1', :'url2', :'url3'], ARRAY[:'broker1', :'broker2', :'broker3'])
      AS d (u, b);
INSERT INTO events (type, payload)
  SELECT 'order.created', '{"id":' || g || ',"total":"9.99","currency":"EUR","customer":"cus_42"}'
    FROM generate_series(1, :n) g;
WITH d AS (SELECT array_agg(id ORDER BY id) AS ids FROM destinations)
INSERT INTO deliveries (event_id, destination_id)
  SELECT e.id, d.ids[1 + e.id % 3] FROM events e, d;
VACUUM ANALYZE;
CHECKPOINT;
