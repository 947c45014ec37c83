-- The history's partitions of each day after the last one through `through`, for every
-- table of the history (migrations/0038_history_days.sql), with their bounds in
-- history_days; returns how many days it added. Run by the migrator and by each
-- retention round, a week ahead, so that ingest never waits for a partition. Each is
-- created on its own and then attached, which locks the parent only against other
-- changes of its partitions (SHARE UPDATE EXCLUSIVE), where CREATE TABLE ... PARTITION
-- OF would lock out its readers and writers too. The destinations' rollups of the day, by
-- minute and by hour (migrations/0044_destination_stats.sql, 0045_destination_stats_hours.sql),
-- are partitioned by time, not by id, and come with them. One caller at a time.
CREATE OR REPLACE FUNCTION webhookd.add_history_days(through date)
 RETURNS integer
 LANGUAGE plpgsql
 SET search_path TO 'webhookd'
AS $function$
DECLARE
  d date;
  t text;
  part text;
  lo bigint;
  hi bigint;
  added integer := 0;
BEGIN
  PERFORM pg_advisory_xact_lock(7252038);
  SELECT max(h.day) + 1 INTO d FROM history_days h;
  WHILE d <= through LOOP
    lo := (d - date '1970-01-01')::bigint << 36;
    hi := ((d + 1) - date '1970-01-01')::bigint << 36;
    FOREACH t IN ARRAY ARRAY['events', 'deliveries', 'attempts', 'dead_letters', 'event_subjects']
    LOOP
      part := t || '_p' || to_char(d, 'YYYYMMDD');
      EXECUTE format('CREATE TABLE webhookd.%I (LIKE webhookd.%I INCLUDING DEFAULTS'
                     ' INCLUDING CONSTRAINTS)%s', part, t,
                     CASE WHEN t = 'deliveries' THEN ' WITH (fillfactor = 50)' ELSE '' END);
      EXECUTE format('ALTER TABLE webhookd.%I ATTACH PARTITION webhookd.%I'
                     ' FOR VALUES FROM (%s) TO (%s)', t || '_days', part, lo, hi);
    END LOOP;
    FOREACH t IN ARRAY ARRAY['destination_stats', 'destination_stats_hours'] LOOP
      part := t || '_p' || to_char(d, 'YYYYMMDD');
      EXECUTE format('CREATE TABLE webhookd.%I (LIKE webhookd.%I INCLUDING DEFAULTS'
                     ' INCLUDING CONSTRAINTS) WITH (fillfactor = 70)', part, t);
      EXECUTE format('ALTER TABLE webhookd.%I ATTACH PARTITION webhookd.%I'
                     ' FOR VALUES FROM (%L) TO (%L)', t, part, (d::timestamp AT TIME ZONE 'UTC'),
                     ((d + 1)::timestamp AT TIME ZONE 'UTC'));
    END LOOP;
    INSERT INTO history_days (day, event_from, event_to, delivery_from, delivery_to)
    VALUES (d, lo, hi, lo, hi);
    added := added + 1;
    d := d + 1;
  END LOOP;
  RETURN added;
END
$function$;
