-- A traceparent as the event keeps it, or NULL when it is not valid: the rules of
-- core/trace_context.cc's ParseTraceparent (any version but ff; version 00 exactly 55
-- characters, a later one with more fields after a '-'; lower-case hex; ids not all
-- zero), written as version 00 with the sampled flag alone. publish_pgtest checks it
-- against ParseTraceparent case by case.
CREATE OR REPLACE FUNCTION webhookd.valid_traceparent(tp text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT '00-' || substr(t, 4, 50)
         || CASE WHEN (('x' || substr(t, 54, 2))::bit(8) & B'00000001') = B'00000001'
                 THEN '01' ELSE '00' END
    FROM (SELECT btrim(tp, E' \t') AS t) s
   WHERE t ~ '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}(-.*)?$'
     AND left(t, 2) <> 'ff'
     AND (left(t, 2) <> '00' OR length(t) = 55)
     AND substr(t, 4, 32) <> repeat('0', 32)
     AND substr(t, 37, 16) <> repeat('0', 16)
$function$;
