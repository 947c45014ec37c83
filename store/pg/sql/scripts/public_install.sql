-- Releases before 0.2 kept their tables in schema public, and moved them into schema
-- webhookd with migration 0004, which the baseline replaced: such an installation is
-- named, never taken for an empty database. Only webhookd's own is meant (the
-- application sharing the database may have tables of the same names): it has all three.
SELECT to_regclass('webhookd.schema_migrations') IS NULL
   AND to_regclass('public.schema_migrations') IS NOT NULL
   AND to_regclass('public.deliveries') IS NOT NULL
   AND to_regclass('public.destinations') IS NOT NULL
