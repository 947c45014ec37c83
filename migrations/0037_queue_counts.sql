-- The gauges' counters over the queue (store/pg/schema/delivery_gauges.sql). 0035 made the
-- gauges count delivery_queue itself, which costs a scrape the whole backlog: about 0.35 s
-- per million queued deliveries. Every statement that changes the queue now adds its net
-- change per creation minute to queue_counts (only ever inserted, so no writer waits on
-- another: store/pg/schema/count_queue_changes.sql), and a read folds those rows into
-- queue_counts_by_minute, so a scrape reads the changes since the last one and a row per
-- minute that still holds unfinished deliveries.
--
-- The counters are filled from the queue by the migrator, in the transaction that creates
-- their triggers (store/pg/sql/scripts/recount_queue.sql), so no statement falls between
-- the count and the triggers.
CREATE TABLE webhookd.queue_counts (
  created_minute  timestamptz NOT NULL,  -- the deliveries' created_at, to the minute
  pending         bigint NOT NULL,
  in_flight       bigint NOT NULL)
-- Inserted per statement and emptied by each read: vacuum it early.
WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000,
      autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 1000);
CREATE TABLE webhookd.queue_counts_by_minute (
  created_minute  timestamptz NOT NULL,
  pending         bigint NOT NULL,
  in_flight       bigint NOT NULL,
  CONSTRAINT queue_counts_by_minute_pkey PRIMARY KEY (created_minute));
