-- $2: the caller's tenant (NULL: any). A tenant's key sees the recoveries of its own
-- destinations alone.
SELECT id, destination_id, tenant_id, status, replayed, since, until, created_at, finished_at
  FROM recoveries WHERE id = $1 AND ($2::text IS NULL OR tenant_id = $2)
