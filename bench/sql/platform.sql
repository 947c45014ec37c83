-- A platform-size database, written straight into a migrated one (no HTTP, no worker):
-- what a company with many customers has after a month. Shared by scripts/bench (the
-- periodic queries' figures) and the pg tests (at a smaller size).
--
--   destinations  :destinations destinations of :destinations / 10 tenants ("tenant-0"…),
--                 ten each, at an address nothing listens on; every 1,000th one has an
--                 open circuit
--   events        :events events of type order.created, spread evenly over the last 30
--                 days (oldest first), each of one tenant in turn, each in its day (its
--                 id that day's first id plus its number)
--   deliveries    :fanout per event (at most 10), in its event's day (its id that day's
--                 first id plus its number), to that many of its tenant's
--                 destinations; the newest :pending are pending (tried once, the retry
--                 due within the hour, none due now); of the others every 1,000th is
--                 cancelled, every other 100th dead-lettered (with its dead letter), the
--                 rest succeeded
--   attempts      one for each of the newest :attempts deliveries (but the cancelled),
--                 started a second after its event
--
-- Older deliveries have no attempts: the periodic queries read attempts by time only, so
-- the month's older attempts would change no figure measured here, only the load time.
-- The 30 days before today must have their partitions (bench/sql/days.sql, days=30), so
-- that the month lies in 31 days as it does in production.
-- Variables: destinations (a multiple of 10), events, fanout, pending, attempts.
\set tenants (:destinations / 10)
\set deliveries (:events * :fanout)

INSERT INTO destinations (url, secret, event_types, tenant_id, circuit, next_probe_at,
                          cooldown_us, failing_since, consecutive_failures)
  SELECT 'http://127.0.0.1:9/p' || g, 'whsec_cGxhdGZvcm0tc2l6ZS1kYXRhYmFzZS1zZWNyZXQ=',
         ARRAY['order.*'], 'tenant-' || (g - 1) / 10,
         CASE WHEN g % 1000 = 0 THEN 'open' ELSE 'closed' END,
         CASE WHEN g % 1000 = 0 THEN now() + interval '1 hour' END,
         CASE WHEN g % 1000 = 0 THEN 3600000000 END,
         CASE WHEN g % 1000 = 0 THEN now() - interval '1 hour' END,
         CASE WHEN g % 1000 = 0 THEN 20 ELSE 0 END
    FROM generate_series(1, :destinations) g;

INSERT INTO events (id, type, payload, tenant_id, created_at)
  SELECT (floor(extract(epoch FROM t.at) / 86400)::bigint << 36) + g, 'order.created',
         '{"id":' || g || ',"total":"9.99","currency":"EUR","customer":"cus_' || g % 977 || '"}',
         'tenant-' || g % :tenants, t.at
    FROM generate_series(1, :events) g,
         LATERAL (SELECT now() - interval '30 days' * (1 - g::float8 / :events) AS at) t;

-- Delivery n (1 = oldest) is event g = (n - 1) / fanout + 1's k-th, k = (n - 1) % fanout,
-- to destination k of g's tenant, its id n past its event's day's first id (an event's
-- number g is its id's low 36 bits).
WITH first AS (SELECT min(id) AS dst FROM destinations),
rows AS (
  SELECT n, (n - 1) / :fanout + 1 AS g,
         f.dst + (((n - 1) / :fanout + 1) % :tenants) * 10 + (n - 1) % :fanout AS destination_id,
         CASE WHEN n > :deliveries - :pending THEN 'pending'
              WHEN n % 1000 = 0 THEN 'cancelled'
              WHEN n % 100 = 0 THEN 'dead_lettered'
              ELSE 'succeeded' END AS status
    FROM first f, generate_series(1, :deliveries) n)
INSERT INTO deliveries (id, event_id, destination_id, tenant_id, status, attempt_count,
                        cycle_attempts, last_attempt_at, last_status_code, created_at,
                        updated_at, stopped_as)
  SELECT ((e.id >> 36) << 36) + r.n, e.id, r.destination_id, e.tenant_id, r.status,
         CASE r.status WHEN 'pending' THEN 1 WHEN 'cancelled' THEN 0
                       WHEN 'dead_lettered' THEN 5 ELSE 1 END,
         CASE r.status WHEN 'pending' THEN 1 WHEN 'cancelled' THEN 0
                       WHEN 'dead_lettered' THEN 5 ELSE 1 END,
         CASE WHEN r.status <> 'cancelled' THEN e.created_at + interval '1 second' END,
         CASE r.status WHEN 'pending' THEN 503 WHEN 'cancelled' THEN NULL
                       WHEN 'dead_lettered' THEN 500 ELSE 200 END,
         e.created_at, e.created_at + interval '1 second',
         CASE WHEN r.status IN ('dead_lettered', 'cancelled') THEN r.status END
    FROM rows r JOIN events e ON (e.id & 68719476735) = r.g
   ORDER BY r.n;

-- The insert queued the pending ones due now: their retries are due within the hour.
UPDATE delivery_queue q
   SET next_attempt_at = now() + interval '1 second'
                         + interval '1 hour' * (((q.id & 68719476735) * 7919) % 3600) / 3600;
-- Their destinations' hints from the insert (due then) give way to the update's own.
DELETE FROM due_destinations WHERE due_at < (SELECT min(next_attempt_at) FROM delivery_queue);

INSERT INTO dead_letters (delivery_id, event_id, destination_id, tenant_id, reason,
                          attempt_count, last_status_code, last_error, dead_lettered_at)
  SELECT d.id, d.event_id, d.destination_id, d.tenant_id, 'exhausted', 5, 500,
         'HTTP 500', d.updated_at
    FROM deliveries d WHERE d.status = 'dead_lettered' ORDER BY d.id;

INSERT INTO attempts (delivery_id, attempt_number, started_at, duration_ms, status_code,
                      outcome)
  SELECT d.id, 1, d.last_attempt_at, 40, d.last_status_code,
         CASE d.status WHEN 'succeeded' THEN 'success' WHEN 'pending' THEN 'retryable'
                       ELSE 'permanent' END
    FROM deliveries d
   WHERE (d.id & 68719476735) > :deliveries - :attempts AND d.status <> 'cancelled'
   ORDER BY d.id;

-- Vacuumed and analyzed, as autovacuum leaves tables soon after a bulk load.
VACUUM ANALYZE destinations, events, deliveries, delivery_queue, due_destinations,
               dead_letters, attempts;
CHECKPOINT;
