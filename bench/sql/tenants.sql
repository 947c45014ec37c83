-- scripts/bench's tenants case: :others destinations of :others / 10 tenants (10 each, at
-- an address nothing listens on; they get no deliveries), then tenant "bench" with 20
-- destinations of which one subscribes to order.* at the sink. An event of "bench" must
-- find its one delivery without reading the others.
-- Variables: others (0 or a multiple of 10), sink (host:port), secret.
INSERT INTO destinations (url, secret, event_types, tenant_id)
  SELECT 'http://127.0.0.1:9/t' || g, :'secret', ARRAY['order.*'],
         'tenant-' || (g % greatest(:others / 10, 1))
    FROM generate_series(1, :others) g;
INSERT INTO destinations (url, secret, event_types, tenant_id, max_in_flight)
  SELECT 'http://' || :'sink' || '/tenant/' || g, :'secret',
         CASE WHEN g = 1 THEN ARRAY['order.*'] ELSE ARRAY['invoice.' || g] END, 'bench', 64
    FROM generate_series(1, 20) g;
-- Vacuumed, as autovacuum leaves a table soon after a bulk load: freshly written rows
-- cost every reader a visibility check (and, measured, autovacuum starting mid-run
-- halved the rate).
VACUUM ANALYZE destinations;
CHECKPOINT;
