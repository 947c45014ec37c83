-- A new id of the history carries its day (UTC) in its high bits: day << 36 | (seq & (2^36
-- - 1)), where day counts days since 1970-01-01 (migrations/0038_history_days.sql). A
-- day's partitions are then a range of ids known before the day begins, so they are
-- created ahead, and a lookup by id reads one day. A delivery is made in its event's
-- transaction, so both carry the same day: the day's partitions hold its events and
-- everything about them. 2^36 ids a day per table; ids stay below 2^53 (exact in a
-- JavaScript number) until the year 2328.
CREATE OR REPLACE FUNCTION webhookd.history_id(seq bigint)
 RETURNS bigint
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$
  SELECT (floor(extract(epoch FROM now()) / 86400)::bigint << 36) | (seq & 68719476735)
$function$;

ALTER TABLE webhookd.events ALTER COLUMN id SET DEFAULT webhookd.history_id(nextval('webhookd.events_id_seq'));

ALTER TABLE webhookd.deliveries ALTER COLUMN id SET DEFAULT webhookd.history_id(nextval('webhookd.deliveries_id_seq'));
