-- The statements that detach day $1's partitions still attached, each run on its own
-- (DETACH ... CONCURRENTLY may not run in a transaction): CONCURRENTLY, so that no ingest,
-- claim or list waits for it; FINALIZE for one whose detach was interrupted (its
-- process killed, PostgreSQL restarted), which the partition keeps as pending. The day's
-- destination rollups (migrations/0044_destination_stats.sql) go last.
SELECT format(CASE WHEN i.inhdetachpending
                   THEN 'ALTER TABLE webhookd.%I DETACH PARTITION webhookd.%I FINALIZE'
                   ELSE 'ALTER TABLE webhookd.%I DETACH PARTITION webhookd.%I CONCURRENTLY' END,
              p.relname, c.relname)
  FROM unnest(ARRAY['events', 'deliveries', 'attempts', 'dead_letters', 'event_subjects',
                    'destination_stats', 'destination_stats_hours'])
       WITH ORDINALITY t(name, ord)
  JOIN pg_class c ON c.relname = t.name || '_p' || to_char($1::date, 'YYYYMMDD')
                 AND c.relnamespace = 'webhookd'::regnamespace
  JOIN pg_inherits i ON i.inhrelid = c.oid
  JOIN pg_class p ON p.oid = i.inhparent
 ORDER BY t.ord
