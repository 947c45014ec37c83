-- scripts/bench's tenants case: 100,000 destinations of 10,000 tenants (10 each, at an
-- address nothing listens on; they get no deliveries), then tenant "bench" with 20
-- destinations of which one subscribes to order.* at the sink. An event of "bench" must
-- find its one delivery without reading the other 100,019 destinations.
-- Variables: sink (host:port), secret.
INSERT INTO destinations (url, secret, event_types, tenant_id)
  SELECT 'http://127.0.0.1:9/t' || g, :'secret', ARRAY['order.*'], 'tenant-' || (g % 10000)
    FROM generate_series(1, 100000) g;
INSERT INTO destinations (url, secret, event_types, tenant_id, max_in_flight)
  SELECT 'http://' || :'sink' || '/tenant/' || g, :'secret',
         CASE WHEN g = 1 THEN ARRAY['order.*'] ELSE ARRAY['invoice.' || g] END, 'bench', 64
    FROM generate_series(1, 20) g;
-- Vacuumed, as autovacuum leaves a table soon after a bulk load: freshly written rows
-- cost every reader a visibility check (and, measured, autovacuum starting mid-run
-- halved the rate).
VACUUM ANALYZE destinations;
CHECKPOINT;
