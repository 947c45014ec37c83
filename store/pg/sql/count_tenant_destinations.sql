-- A tenant's live destinations ($1; NULL: the no-tenant space), each space through its
-- own index.
SELECT (SELECT count(*) FROM destinations
         WHERE $1::text IS NULL AND tenant_id IS NULL AND deleted_at IS NULL)
     + (SELECT count(*) FROM destinations
         WHERE tenant_id = $1::text AND deleted_at IS NULL AND tenant_id IS NOT NULL)
