-- scripts/bench (the privacy case): the end of bench/sql/history.sql's history of :events
-- events: the identities continue after it, and the tables are vacuumed and analyzed (as
-- autovacuum leaves them soon after a bulk load) and checkpointed.
SELECT setval(pg_get_serial_sequence('webhookd.events', 'id'), :events) AS events,
       setval(pg_get_serial_sequence('webhookd.deliveries', 'id'), :events) AS deliveries
\gset
VACUUM ANALYZE events, deliveries, attempts, event_subjects, destinations;
CHECKPOINT;
