-- Why $1 may not be a destination's filter, NULL when it may (migrations/0019_event_catalog.sql).
SELECT filter_problem($1)
