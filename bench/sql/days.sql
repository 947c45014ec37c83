-- scripts/bench and the pg tests: the history's partitions of the :days days before today
-- (migrations/0038_history_days.sql), made beside a fresh database's (whose days begin
-- today) as a retention round makes a day ahead, each day's five created and then attached,
-- so that a case measures webhookd with the days a month of production has.
-- Variables: days.
SELECT format('CREATE TABLE webhookd.%I (LIKE webhookd.%I INCLUDING DEFAULTS INCLUDING'
              ' CONSTRAINTS); ALTER TABLE webhookd.%I ATTACH PARTITION webhookd.%I'
              ' FOR VALUES FROM (%s) TO (%s)',
              t || '_p' || to_char(d, 'YYYYMMDD'), t, t || '_days',
              t || '_p' || to_char(d, 'YYYYMMDD'), (d - date '1970-01-01')::bigint << 36,
              (d + 1 - date '1970-01-01')::bigint << 36)
  FROM generate_series(1, :days) k,
       LATERAL (SELECT (now() AT TIME ZONE 'UTC')::date - k AS d) x,
       unnest(ARRAY['events', 'deliveries', 'attempts', 'dead_letters', 'event_subjects']) t
\gexec
INSERT INTO history_days (day, event_from, event_to, delivery_from, delivery_to)
  SELECT d, lo, hi, lo, hi
    FROM generate_series(1, :days) k,
         LATERAL (SELECT (now() AT TIME ZONE 'UTC')::date - k AS d) x,
         LATERAL (SELECT (d - date '1970-01-01')::bigint << 36 AS lo,
                         (d + 1 - date '1970-01-01')::bigint << 36 AS hi) b;
