-- The history's partitions through $1 days from today (store/pg/schema/add_history_days.sql).
SELECT webhookd.add_history_days((now() AT TIME ZONE 'UTC')::date + $1::int)
