-- Everything of webhookd lives in schema webhookd, so it can share a database with the
-- application that publishes to it. Fresh installations created their tables there
-- already (the migrator runs with search_path = webhookd); an installation made before
-- 0.2 had them in public and moves now, rows, indexes, sequences and all. A table of the
-- same name that webhookd did not make stays where it is.
DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['api_keys', 'destinations', 'events', 'deliveries', 'attempts',
                           'dead_letters', 'idempotency_keys'] LOOP
    IF to_regclass('public.' || t) IS NOT NULL AND to_regclass('webhookd.' || t) IS NULL THEN
      EXECUTE format('ALTER TABLE public.%I SET SCHEMA webhookd', t);
    END IF;
  END LOOP;
  IF to_regprocedure('public.webhookd_claim(integer, bigint, bigint, integer)') IS NOT NULL THEN
    ALTER FUNCTION public.webhookd_claim(integer, bigint, bigint, integer) SET SCHEMA webhookd;
  END IF;
END
$$;

-- Inside the schema the prefix says nothing; the function resolves its tables in it
-- whoever calls it.
ALTER FUNCTION webhookd.webhookd_claim(integer, bigint, bigint, integer) RENAME TO claim_due;
ALTER FUNCTION webhookd.claim_due(integer, bigint, bigint, integer) SET search_path = webhookd;

-- The one definition of which event types a destination's `event_types` select: "p.*"
-- selects every type starting with "p.", an empty list every type. A single-expression
-- SQL function, so the planner inlines it into the fan-out statements.
CREATE FUNCTION webhookd.event_type_matches(patterns text[], type text) RETURNS boolean
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN cardinality(patterns) = 0
      OR EXISTS (SELECT 1 FROM unnest(patterns) p
                  WHERE p = type OR (right(p, 2) = '.*' AND starts_with(type, left(p, -1))));
