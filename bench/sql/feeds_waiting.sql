-- scripts/bench: :destinations feed destinations of :destinations / 10 tenants, ten each,
-- with :waiting messages nobody reads (ten per event, each event to its tenant's ten
-- feeds), then the measured feed (the last destination, of tenant "bench") with :target
-- messages.
-- Variables: destinations (a multiple of 10), waiting (a multiple of 10), target, secret.
\set tenants (:destinations / 10)
INSERT INTO destinations (url, secret, tenant_id)
  SELECT 'feed:', :'secret', 'tenant-' || (g - 1) / 10 FROM generate_series(1, :destinations) g;
INSERT INTO destinations (url, secret, tenant_id) VALUES ('feed:', :'secret', 'bench');
INSERT INTO events (type, payload, tenant_id)
  SELECT 'order.created', '{"id":' || g || ',"total":"9.99","currency":"EUR"}',
         'tenant-' || g % :tenants
    FROM generate_series(1, :waiting / 10) g;
WITH first AS (SELECT min(id) AS dst FROM destinations)
INSERT INTO deliveries (event_id, destination_id, tenant_id)
  SELECT e.id, f.dst + (substr(e.tenant_id, 8)::int) * 10 + k, e.tenant_id
    FROM events e, first f, generate_series(0, 9) k
   ORDER BY e.id, k;
INSERT INTO events (type, payload, tenant_id)
  SELECT 'order.created', '{"id":' || g || ',"total":"9.99","currency":"EUR"}', 'bench'
    FROM generate_series(1, :target) g;
INSERT INTO deliveries (event_id, destination_id, tenant_id)
  SELECT e.id, (SELECT max(id) FROM destinations), e.tenant_id
    FROM events e WHERE e.tenant_id = 'bench' ORDER BY e.id;
VACUUM ANALYZE destinations, events, deliveries, delivery_queue, due_destinations;
CHECKPOINT;
