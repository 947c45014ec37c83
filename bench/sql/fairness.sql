-- scripts/bench's fairness case: tenant "noisy" with :n due deliveries over 20
-- destinations at the sink's /ok/noisy/1..20 (max_in_flight 64 each), and tenant "quiet"
-- with one destination at the recording sink's /e2e/quiet, which the bench then posts
-- events to through the API.
-- Variables: n, sink (host:port), quiet_sink (host:port), secret.
INSERT INTO destinations (url, secret, tenant_id, max_in_flight)
  SELECT 'http://' || :'sink' || '/ok/noisy/' || g, :'secret', 'noisy', 64
    FROM generate_series(1, 20) g;
INSERT INTO destinations (url, secret, tenant_id)
  VALUES ('http://' || :'quiet_sink' || '/e2e/quiet', :'secret', 'quiet');
INSERT INTO events (type, payload, tenant_id)
  SELECT 'order.created', '{"id":' || g || ',"total":"9.99","currency":"EUR","customer":"cus_42"}',
         'noisy'
    FROM generate_series(1, :n) g;
WITH d AS (SELECT array_agg(id ORDER BY id) AS ids FROM destinations WHERE tenant_id = 'noisy')
INSERT INTO deliveries (event_id, destination_id, tenant_id)
  SELECT e.id, d.ids[1 + e.id % 20], 'noisy' FROM events e, d;
VACUUM ANALYZE;
CHECKPOINT;
