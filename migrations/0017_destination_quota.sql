-- WEBHOOKD_MAX_DESTINATIONS_PER_TENANT counts a tenant's live destinations at every
-- creation: through destinations_tenant for a tenant, and through this index for the
-- no-tenant space (partial, so tenants' rows cost nothing more to insert and the count
-- never reads them).
CREATE INDEX destinations_no_tenant ON webhookd.destinations (id)
  WHERE deleted_at IS NULL AND tenant_id IS NULL;
