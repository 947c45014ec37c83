-- An id above every event created before `before`: the end of the partition of before's
-- day (UTC). A day copied from before migrations/0038_history_days.sql can have lent a
-- late transaction's events to the next day's partition, so for those days it is the end
-- of the next one. A list bounded in time names it, so that the partitions of later days
-- are not read (first_event_id_at.sql). NULL, or a time before the first day kept: no
-- bound.
CREATE OR REPLACE FUNCTION webhookd.event_id_bound_before(before timestamptz)
 RETURNS bigint
 LANGUAGE sql
 STABLE PARALLEL SAFE
 SET search_path TO 'webhookd'
AS $function$
  SELECT coalesce(
    (SELECT CASE WHEN h.event_from = (h.day - date '1970-01-01')::bigint << 36 THEN h.event_to
                 ELSE (SELECT n.event_to FROM history_days n WHERE n.day > h.day
                        ORDER BY n.day LIMIT 1) END
       FROM history_days h
      WHERE h.day <= (before AT TIME ZONE 'UTC')::date ORDER BY h.day DESC LIMIT 1),
    9223372036854775807)
$function$;
