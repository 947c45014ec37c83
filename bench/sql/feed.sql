-- scripts/bench: one feed destination (url feed:) with :n waiting messages, for the feed
-- drain; its messages are signed with the run's secret, which the consumers verify.
-- Variables: n, secret.
INSERT INTO destinations (url, secret) VALUES ('feed:', :'secret');
INSERT INTO events (type, payload)
  SELECT 'order.created', '{"id":' || g || ',"total":"9.99","currency":"EUR","customer":"cus_42"}'
    FROM generate_series(1, :n) g;
INSERT INTO deliveries (event_id, destination_id)
  SELECT e.id, (SELECT min(id) FROM destinations) FROM events e ORDER BY e.id;
VACUUM ANALYZE;
CHECKPOINT;
