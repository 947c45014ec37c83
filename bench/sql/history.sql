-- scripts/bench (the privacy case): one chunk of a history of finished events, written
-- straight into a migrated database (no HTTP, no worker), each with one succeeded
-- delivery and its one attempt.
--
--   events      :first to :last of :events, ids dense from the first id of the day
--               :days_back days ago (migrations/0038_history_days.sql: an id carries its
--               day; that day's partitions must exist, as today's do in a fresh database
--               and bench/sql/history_day.sql makes an earlier one's), type
--               order.created, spread evenly from :oldest_days to :newest_days ago
--               (oldest first), no tenant. About 1 % name a subject, set in
--               events.subjects so that the row trigger (store/pg/schema/
--               index_event_subjects.sql) indexes it: user:bench-42, -43 and -44 name
--               exactly 100 events each, three neighbours in every :events / 100 (the
--               erasures the bench times); every 100th event names 'user:' || K, each K
--               about ten events
--   deliveries  one per event (same id), succeeded, to the database's destination (made
--               by the first chunk, at an address nothing listens on)
--   attempts    one per delivery, 200 with a short response body (which an erasure empties)
--
-- Variables: events (a multiple of 100, at least 10,000), first, last, days_back,
-- oldest_days, newest_days. bench/sql/history_done.sql ends the history.
\set span (:events / 100)
SELECT (floor(extract(epoch FROM now()) / 86400)::bigint - :days_back) << 36 AS base \gset

INSERT INTO destinations (url, secret, event_types)
  SELECT 'http://127.0.0.1:9/history', 'whsec_aGlzdG9yeS1vZi1maW5pc2hlZC1ldmVudHMtc2VjcmV0',
         ARRAY['order.*']
   WHERE NOT EXISTS (SELECT 1 FROM destinations);
SELECT min(id) AS destination FROM destinations \gset

INSERT INTO events (id, type, payload, created_at, subjects)
  SELECT :base + g, 'order.created',
         '{"id":' || g || ',"total":"9.99","currency":"EUR","customer":"cus_' || g % 977 || '"}',
         now() - interval '1 day' * (:oldest_days - (:oldest_days - :newest_days)
                                                    * g::float8 / :events),
         CASE WHEN (g - 1) % :span < 3 THEN ARRAY['user:bench-' || (42 + (g - 1) % :span)]
              WHEN g % 100 = 0 THEN ARRAY['user:' || ((g / 100) % (:events / 1000 + 1))] END
    FROM generate_series(:first, :last) g;

INSERT INTO deliveries (id, event_id, destination_id, status, attempt_count, cycle_attempts,
                        last_attempt_at, last_status_code, created_at, updated_at)
  SELECT e.id, e.id, :destination, 'succeeded', 1, 1, e.created_at + interval '1 second', 200,
         e.created_at, e.created_at + interval '1 second'
    FROM events e WHERE e.id BETWEEN :base + :first AND :base + :last ORDER BY e.id;

INSERT INTO attempts (delivery_id, attempt_number, started_at, duration_ms, status_code,
                      response_body, outcome)
  SELECT d.id, 1, d.last_attempt_at, 40, 200, '{"received":true}', 'success'
    FROM deliveries d WHERE d.id BETWEEN :base + :first AND :base + :last ORDER BY d.id;
