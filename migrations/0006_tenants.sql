-- Tenants: a producer's customers, named by the producer with a tenant_id (1-128 of
-- [A-Za-z0-9._:-]; the API validates, the CHECKs keep any other writer honest). An event
-- fans out only to destinations of its own tenant (or, without one, to destinations
-- without one), and a tenant key sees its tenant's rows alone.
ALTER TABLE webhookd.destinations ADD COLUMN tenant_id text
  CHECK (tenant_id ~ '^[A-Za-z0-9._:-]{1,128}$');
ALTER TABLE webhookd.events ADD COLUMN tenant_id text
  CHECK (tenant_id ~ '^[A-Za-z0-9._:-]{1,128}$');
-- Copied from the event (which is the destination's tenant) by the fan-out, and onto a
-- dead letter from its delivery, so every list filters a tenant through its own index
-- instead of through a join.
ALTER TABLE webhookd.deliveries ADD COLUMN tenant_id text;
ALTER TABLE webhookd.dead_letters ADD COLUMN tenant_id text;

-- The fan-out's lookup: an event's tenant finds its live destinations without reading
-- anyone else's. NULL and '' are the same key here ('' is no valid tenant), so "no tenant"
-- is one equality too and the fan-out is a plain index probe, with a generic plan as well.
-- It carries what the fan-out reads (tenant_id, event_types), so the probe is an
-- index-only scan: a tenant's 20 destinations cost no heap visits per event.
CREATE INDEX destinations_fan_out ON webhookd.destinations ((coalesce(tenant_id, '')), id)
  INCLUDE (tenant_id, event_types) WHERE enabled AND deleted_at IS NULL;
-- The `tenant_id=` filter and a tenant key's reach, newest first. Partial, so rows without
-- a tenant (every row of an installation that does not use tenants) cost nothing more to
-- insert.
CREATE INDEX destinations_tenant ON webhookd.destinations (tenant_id, id)
  WHERE deleted_at IS NULL AND tenant_id IS NOT NULL;
CREATE INDEX events_tenant ON webhookd.events (tenant_id, id) WHERE tenant_id IS NOT NULL;
CREATE INDEX deliveries_tenant ON webhookd.deliveries (tenant_id, id) WHERE tenant_id IS NOT NULL;
CREATE INDEX dead_letters_tenant ON webhookd.dead_letters (tenant_id, id)
  WHERE tenant_id IS NOT NULL;

-- Whoever writes a dead letter, it carries its delivery's tenant. A trigger rather than a
-- column in each writer's statement: the worker's outcome statement stays as it is, and a
-- dead letter can never disagree with its delivery. Dead letters are rare, so the lookup
-- costs the hot path nothing.
CREATE FUNCTION webhookd.dead_letter_tenant() RETURNS trigger
  LANGUAGE plpgsql SET search_path = webhookd
  AS $$
BEGIN
  SELECT d.tenant_id INTO NEW.tenant_id FROM deliveries d WHERE d.id = NEW.delivery_id;
  RETURN NEW;
END
$$;
CREATE TRIGGER dead_letters_tenant BEFORE INSERT ON webhookd.dead_letters
  FOR EACH ROW EXECUTE FUNCTION webhookd.dead_letter_tenant();

-- Tenant keys: bound to one tenant. Any key may expire; an expired key is refused like a
-- revoked one.
ALTER TABLE webhookd.api_keys DROP CONSTRAINT api_keys_role_check;
ALTER TABLE webhookd.api_keys
  ADD COLUMN tenant_id text CHECK (tenant_id ~ '^[A-Za-z0-9._:-]{1,128}$'),
  ADD COLUMN expires_at timestamptz,
  ADD CONSTRAINT api_keys_role_check CHECK (role IN ('publisher', 'admin', 'tenant')),
  ADD CONSTRAINT api_keys_tenant_check CHECK ((role = 'tenant') = (tenant_id IS NOT NULL));
