-- Retention deletes deliveries in batches, and PostgreSQL checks every deleted delivery's
-- foreign key from dead_letters by looking its dead letters up by delivery_id: without an
-- index, one scan of the whole table per deleted delivery. With 320,000 dead letters a
-- batch of 1,000 events took 35 s (the purge could not keep up with 30 events a second);
-- with it, the check takes milliseconds. The purge's own delete of dead letters uses it too.
CREATE INDEX dead_letters_delivery ON webhookd.dead_letters (delivery_id);
