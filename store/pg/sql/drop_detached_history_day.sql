-- Day $1 of the history, detached: what of it must stay copied to the kept partitions,
-- then its tables dropped (store/pg/schema/drop_detached_history_day.sql).
SELECT webhookd.drop_detached_history_day($1::date)
