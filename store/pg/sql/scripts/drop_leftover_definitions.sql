-- A database migrated by the releases before the baseline may hold functions, triggers
-- and views that their migrations made and the baseline's database has not (an old
-- signature of a function, one since renamed). Run in the transaction that has just
-- applied every file of store/pg/schema/: each live definition's catalog row was written
-- by it (CREATE OR REPLACE rewrites the row even when nothing changed), so an object of
-- schema webhookd whose row was last written before this transaction (age(xmin) > 0) is
-- such a leftover, and goes. Views and triggers first, then the routines they call.
-- Without CASCADE: an object of the operator's that uses a leftover stops the upgrade,
-- named in the error, rather than going with it.
DO $$
DECLARE
  r record;
BEGIN
  FOR r IN
    SELECT 1 AS step, format('DROP VIEW webhookd.%I', c.relname) AS stmt
      FROM pg_class c JOIN pg_rewrite w ON w.ev_class = c.oid
     WHERE c.relnamespace = 'webhookd'::regnamespace AND c.relkind = 'v' AND age(w.xmin) > 0
    UNION ALL
    SELECT 2, format('DROP TRIGGER %I ON webhookd.%I', t.tgname, c.relname)
      FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
     WHERE NOT t.tgisinternal AND c.relnamespace = 'webhookd'::regnamespace
       AND age(t.xmin) > 0
    UNION ALL
    SELECT 3, format('DROP ROUTINE webhookd.%I(%s)', p.proname,
                     pg_get_function_identity_arguments(p.oid))
      FROM pg_proc p
     WHERE p.pronamespace = 'webhookd'::regnamespace AND age(p.xmin) > 0
     ORDER BY 1, 2
  LOOP
    EXECUTE r.stmt;
  END LOOP;
END
$$
