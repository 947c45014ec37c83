-- W3C trace context (docs/tracing.md). Each event keeps the `traceparent` its attempts
-- continue: the one that names webhookd's ingest span (in the producer's trace when the
-- producer sent one), and the producer's `tracestate`. Events that come in another way
-- (publish(), the operational events) get a fresh trace from the column's default, set
-- here rather than in the baseline migration, which runs before any function exists.
-- Setting a default rewrites no row (events from before the column stay NULL, and each of
-- their attempts starts a trace of its own).
CREATE OR REPLACE FUNCTION webhookd.new_traceparent()
 RETURNS text
 LANGUAGE sql
AS $function$
  SELECT '00-' || replace(gen_random_uuid()::text, '-', '') || '-'
         || left(replace(gen_random_uuid()::text, '-', ''), 16) || '-01'
$function$;

ALTER TABLE webhookd.events ALTER COLUMN traceparent SET DEFAULT webhookd.new_traceparent();
