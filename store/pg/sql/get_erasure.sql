-- $2: the caller's tenant (NULL: any). A tenant's key sees its own tenant's erasures,
-- never one across every tenant.
SELECT id, status, events, cancelled_deliveries, created_at, finished_at, tenant_id
  FROM erasures WHERE id = $1 AND ($2::text IS NULL OR tenant_id = $2)
