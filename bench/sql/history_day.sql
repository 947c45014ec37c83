-- scripts/bench (the retention case): the history's partitions of the day :days_back days
-- ago, made beside a fresh database's (whose days begin today: migrations/0038_history_days.sql),
-- as store/pg/schema/add_history_days.sql makes a day ahead, so that bench/sql/history.sql
-- can write that day's events and retention can drop it.
SELECT (now() AT TIME ZONE 'UTC')::date - :days_back AS day \gset
SELECT ((:'day'::date - date '1970-01-01')::bigint) << 36 AS lo,
       ((:'day'::date + 1 - date '1970-01-01')::bigint) << 36 AS hi \gset
SELECT set_config('bench.day', :'day', false), set_config('bench.lo', :'lo', false),
       set_config('bench.hi', :'hi', false) \gset
DO $$
DECLARE
  t text;
  part text;
BEGIN
  FOREACH t IN ARRAY ARRAY['events', 'deliveries', 'attempts', 'dead_letters', 'event_subjects']
  LOOP
    part := t || '_p' || to_char(current_setting('bench.day')::date, 'YYYYMMDD');
    EXECUTE format('CREATE TABLE webhookd.%I (LIKE webhookd.%I INCLUDING DEFAULTS'
                   ' INCLUDING CONSTRAINTS)', part, t);
    EXECUTE format('ALTER TABLE webhookd.%I ATTACH PARTITION webhookd.%I FOR VALUES FROM (%s)'
                   ' TO (%s)', t || '_days', part, current_setting('bench.lo'),
                   current_setting('bench.hi'));
  END LOOP;
END
$$;
INSERT INTO history_days (day, event_from, event_to, delivery_from, delivery_to)
VALUES (:'day', :lo, :hi, :lo, :hi);
