-- Releases before 0.2 kept their tables in the public schema. Their migration record moves
-- into schema webhookd first, so the migrator sees what was applied; migration
-- 0004_schema_webhookd moves the rest. Only a webhookd installation is moved: the
-- application sharing the database may have tables of the same names.
DO $$
DECLARE
  ours boolean := false;
BEGIN
  IF to_regclass('webhookd.schema_migrations') IS NULL
     AND to_regclass('public.schema_migrations') IS NOT NULL
     AND to_regclass('public.deliveries') IS NOT NULL
     AND to_regclass('public.destinations') IS NOT NULL THEN
    -- Dynamic: the table may not exist, so the query cannot be planned up front.
    EXECUTE 'SELECT EXISTS (SELECT 1 FROM public.schema_migrations WHERE version = ''0001_init'')'
       INTO ours;
  END IF;
  IF ours THEN
    ALTER TABLE public.schema_migrations SET SCHEMA webhookd;
  END IF;
END
$$
