-- Every partition of the history (migrations/0038_history_days.sql) for `webhookd
-- retention status`: each day's five, in day order, then the kept ones. Rows are
-- PostgreSQL's running count of live rows (pg_stat_user_tables), not a count: a day holds
-- millions. $1: the retention in microseconds (0: kept forever), which sets when each day
-- goes.
SELECT t.name, h.day::text, coalesce(s.n_live_tup, 0),
       coalesce(pg_total_relation_size(c.oid), 0),
       CASE WHEN $1::bigint > 0
            THEN ((h.day + 1)::timestamp AT TIME ZONE 'UTC') + $1::bigint * interval '1 microsecond'
       END,
       h.detaching_since IS NOT NULL, t.ord
  FROM history_days h
 CROSS JOIN unnest(ARRAY['events', 'deliveries', 'attempts', 'dead_letters', 'event_subjects'])
       WITH ORDINALITY t(name, ord)
  LEFT JOIN pg_class c ON c.relnamespace = 'webhookd'::regnamespace
                      AND c.relname = t.name || '_p' || to_char(h.day, 'YYYYMMDD')
  LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
UNION ALL
SELECT t.name, NULL, coalesce(s.n_live_tup, 0), coalesce(pg_total_relation_size(c.oid), 0),
       NULL, false, t.ord
  FROM unnest(ARRAY['events', 'deliveries', 'attempts', 'dead_letters', 'event_subjects'])
       WITH ORDINALITY t(name, ord)
  JOIN pg_class c ON c.relnamespace = 'webhookd'::regnamespace AND c.relname = t.name || '_kept'
  LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
 ORDER BY 2 NULLS LAST, 7
