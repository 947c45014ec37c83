-- The last step of dropping a day of the history (docs/retention.md), once its five
-- partitions are detached: what of the day became unfinished after it was carried
-- (store/pg/sql/carry_history_day.sql), such as a dead letter replayed meanwhile, or
-- belongs to an event kept since, is copied into the kept partitions, as no writer can
-- reach a detached table; then the tables are dropped, which writes a few WAL records
-- whatever their size. Refuses while a partition of the day is still attached. Returns
-- how many events it kept.
CREATE OR REPLACE FUNCTION webhookd.drop_detached_history_day(day date)
 RETURNS integer
 LANGUAGE plpgsql
 SET search_path TO 'webhookd'
AS $function$
DECLARE
  sfx text := '_p' || to_char(day, 'YYYYMMDD');
  h history_days;
  scan_to bigint;
  t text;
  kept_events integer;
BEGIN
  SELECT * INTO h FROM history_days d WHERE d.day = drop_detached_history_day.day;
  IF NOT FOUND THEN
    RETURN 0;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
              WHERE c.relnamespace = 'webhookd'::regnamespace
                AND c.relname IN ('events' || sfx, 'deliveries' || sfx, 'attempts' || sfx,
                                  'dead_letters' || sfx, 'event_subjects' || sfx,
                                  'destination_stats' || sfx,
                                  'destination_stats_hours' || sfx)) THEN
    RAISE EXCEPTION 'day % of the history is still attached', day;
  END IF;
  SELECT coalesce((SELECT n.delivery_to FROM history_days n WHERE n.day > h.day
                    ORDER BY n.day LIMIT 1), h.delivery_to) INTO scan_to;

  -- The events to keep: those with a delivery in the queue, and those already kept.
  CREATE TEMP TABLE rescued_events ON COMMIT DROP AS SELECT NULL::bigint AS id LIMIT 0;
  EXECUTE format(
    'INSERT INTO rescued_events'
    ' SELECT d.event_id FROM %1$I d WHERE d.id IN (SELECT q.id FROM delivery_queue q'
    '   WHERE q.id >= %2$s AND q.id < %3$s)'
    ' UNION SELECT d.event_id FROM deliveries d WHERE d.id IN (SELECT q.id FROM delivery_queue q'
    '   WHERE q.id >= %2$s AND q.id < %3$s)'
    ' UNION SELECT d.event_id FROM %1$I d WHERE d.event_id IN (SELECT k.id FROM events_kept k)',
    'deliveries' || sfx, coalesce(h.delivery_from, -9223372036854775808), scan_to);
  EXECUTE format('DELETE FROM rescued_events r WHERE NOT EXISTS'
                 ' (SELECT 1 FROM %I e WHERE e.id = r.id)'
                 ' AND NOT EXISTS (SELECT 1 FROM %I d WHERE d.event_id = r.id)',
                 'events' || sfx, 'deliveries' || sfx);
  SELECT count(*) INTO kept_events FROM rescued_events;

  IF kept_events > 0 THEN
    -- Each row as it was, with kept set, through jsonb, so one text serves every table.
    EXECUTE format(
      'INSERT INTO events SELECT (jsonb_populate_record(NULL::events,'
      ' to_jsonb(x) || ''{"kept": true}'')).* FROM %I x WHERE x.id IN (SELECT id FROM rescued_events)',
      'events' || sfx);
    CREATE TEMP TABLE rescued_deliveries ON COMMIT DROP AS SELECT NULL::bigint AS id LIMIT 0;
    EXECUTE format(
      'WITH moved AS (INSERT INTO deliveries SELECT (jsonb_populate_record(NULL::deliveries,'
      ' to_jsonb(x) || ''{"kept": true}'')).* FROM %I x'
      ' WHERE x.event_id IN (SELECT id FROM rescued_events) RETURNING id)'
      ' INSERT INTO rescued_deliveries SELECT id FROM moved',
      'deliveries' || sfx);
    FOREACH t IN ARRAY ARRAY['attempts', 'dead_letters'] LOOP
      EXECUTE format(
        'INSERT INTO %1$I SELECT (jsonb_populate_record(NULL::%1$I,'
        ' to_jsonb(x) || ''{"kept": true}'')).* FROM %2$I x'
        ' WHERE x.delivery_id IN (SELECT id FROM rescued_deliveries)', t, t || sfx);
    END LOOP;
    EXECUTE format(
      'INSERT INTO event_subjects SELECT (jsonb_populate_record(NULL::event_subjects,'
      ' to_jsonb(x) || ''{"kept": true}'')).* FROM %I x'
      ' WHERE x.event_id IN (SELECT id FROM rescued_events)', 'event_subjects' || sfx);
  END IF;

  -- The day's destination rollups (migrations/0044_destination_stats.sql) go with it.
  FOREACH t IN ARRAY ARRAY['events', 'deliveries', 'attempts', 'dead_letters', 'event_subjects',
                           'destination_stats', 'destination_stats_hours']
  LOOP
    EXECUTE format('DROP TABLE IF EXISTS %I', t || sfx);
  END LOOP;
  DELETE FROM history_days d WHERE d.day = drop_detached_history_day.day;
  RETURN kept_events;
END
$function$;
