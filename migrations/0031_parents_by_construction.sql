-- The queue's rows refer to their parents by construction, not by foreign keys.
--
-- A delivery is written only in the transaction that writes its event (the ingest group,
-- the publish function, an operational event in the outcome statement), to a destination
-- read there; destinations are never deleted, only marked (deleted_at). An attempt
-- and a dead letter are written only in the outcome statement, for the delivery it has
-- just updated under its claim token. Rows leave only through the retention purge, which
-- deletes an event with everything under it and keeps an event whose deliveries it could
-- not all delete (store/pg/sql/purge_expired_events.sql).
--
-- The foreign keys checked the same facts again, at a price on the two busiest paths: a
-- lookup of the parent per row written (four per delivery between ingest and outcome),
-- and a plan for that lookup that PostgreSQL makes once per connection from the parent's
-- statistics. A parent table analyzed while empty (retention purged everything, then
-- autovacuum analyzed it) gave a plan that read the whole parent table for every row
-- written, until the statistics changed again: by hand, the ingest statement fell from
-- ~19,000 to ~2,700 events/s. tests/store/pg/integrity_pgtest.cc holds what the keys held.
ALTER TABLE webhookd.deliveries DROP CONSTRAINT deliveries_event_id_fkey,
                                DROP CONSTRAINT deliveries_destination_id_fkey;
ALTER TABLE webhookd.attempts DROP CONSTRAINT attempts_delivery_id_fkey;
ALTER TABLE webhookd.dead_letters DROP CONSTRAINT dead_letters_delivery_id_fkey;
