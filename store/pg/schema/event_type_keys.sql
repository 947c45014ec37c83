-- The keys an event type matches under (event_type_matches.sql), in PL/pgSQL. As a SQL function
-- with a sub-select it could never be inlined, so every statement that called it parsed
-- and planned its body again at each execution (~7 % of PostgreSQL's CPU under grouped
-- ingest, where each group calls it once per distinct type). PL/pgSQL keeps its
-- compiled body for the session, and its loop of simple expressions runs without the
-- executor. tests/store/pg/event_type_rule_pgtest.cc holds it to the rule of docs/api.md (exact, prefix.*, *).
CREATE OR REPLACE FUNCTION webhookd.event_type_keys(type text)
 RETURNS text[]
 LANGUAGE plpgsql
 IMMUTABLE PARALLEL SAFE
AS $function$
DECLARE
  keys text[] := ARRAY[type];
  at int := 0;  -- the length of the prefix scanned so far
  dot int := strpos(type, '.');
BEGIN
  WHILE dot > 0 LOOP
    at := at + dot;
    keys := keys || (left(type, at) || '*');
    dot := strpos(substr(type, at + 1), '.');
  END LOOP;
  RETURN keys;
END
$function$;
