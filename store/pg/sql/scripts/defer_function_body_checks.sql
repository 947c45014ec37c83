-- The schema files are applied in name order, so a SQL function may be created before one
-- it calls; its body is checked when it runs, as pg_dump's restores do.
SET LOCAL check_function_bodies = off
