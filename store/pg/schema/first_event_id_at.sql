-- The lowest id an event created at `since` or later can have: the first id of the partition
-- of since's day (UTC), or of the first day after it. A list bounded in time names it, so
-- that only its days' partitions are read (migrations/0038_history_days.sql): events.id
-- and created_at come from one now(). An event copied from before 0038 lies in its day's
-- partition or a later one, as each of those days begins at its first event. Before the
-- first day kept, no bound: the kept events (carried past their day) have their days' ids.
-- NULL: no bound.
CREATE OR REPLACE FUNCTION webhookd.first_event_id_at(since timestamptz)
 RETURNS bigint
 LANGUAGE sql
 STABLE PARALLEL SAFE
 SET search_path TO 'webhookd'
AS $function$
  SELECT CASE
    WHEN since IS NULL OR (since AT TIME ZONE 'UTC')::date <= (SELECT min(day) FROM history_days)
      THEN -9223372036854775808
    ELSE coalesce((SELECT h.event_from FROM history_days h
                    WHERE h.day >= (since AT TIME ZONE 'UTC')::date ORDER BY h.day LIMIT 1),
                  9223372036854775807) END
$function$;
