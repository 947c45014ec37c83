-- Hardening of the producer side.
--
-- 1. Idempotency keys belong to the event's tenant: one global namespace let two
--    producers (or publish() and the API) collide, and one read the other's receipt.
--    Rows taken in the last 24 hours keep their meaning: each gets its event's tenant.
ALTER TABLE webhookd.idempotency_keys ADD COLUMN tenant_scope text NOT NULL DEFAULT '';
UPDATE webhookd.idempotency_keys k SET tenant_scope = coalesce(e.tenant_id, '')
  FROM webhookd.events e WHERE e.id = k.event_id;
ALTER TABLE webhookd.idempotency_keys DROP CONSTRAINT idempotency_keys_pkey,
  ADD PRIMARY KEY (tenant_scope, key);

-- 2. publish() is held to the API's limits: the body size and 64 levels of nesting (a 400
--    KB payload and 100 levels were accepted). Depth without a parser: strings (which may
--    hold brackets) go, then everything but brackets, then each round removes the
--    innermost pairs; the rounds it takes are the depth, and it stops past the limit, so
--    a pathological document costs at most limit + 1 passes over its brackets.
CREATE FUNCTION webhookd.json_depth_exceeds(doc text, max_depth int) RETURNS boolean
  LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  s text := regexp_replace(regexp_replace(doc, '"(\\.|[^"\\])*"', '', 'g'), '[^][{}]', '', 'g');
  depth int := 0;
  before int;
BEGIN
  WHILE s <> '' LOOP
    depth := depth + 1;
    IF depth > max_depth THEN
      RETURN true;
    END IF;
    before := length(s);
    s := regexp_replace(s, '\[\]|\{\}', '', 'g');
    IF length(s) = before THEN
      RETURN false;  -- unbalanced: not JSON, which the caller checks
    END IF;
  END LOOP;
  RETURN false;
END
$$;

CREATE OR REPLACE FUNCTION webhookd.publish(type text, payload text, tenant_id text DEFAULT NULL,
                                 destination_id text DEFAULT NULL,
                                 idempotency_key text DEFAULT NULL)
  RETURNS text
  LANGUAGE plpgsql
  -- Runs with the owner's rights, so a caller needs EXECUTE alone; the search_path is
  -- pinned so a caller's own objects cannot stand in for webhookd's.
  SECURITY DEFINER SET search_path = webhookd, pg_temp
  AS $$
DECLARE
  v_type text := publish.type;
  v_tenant text := publish.tenant_id;
  v_target bigint;
  v_target_tenant text;
  v_hash text;
  v_event bigint;
  v_held record;
  v_doc json;
  v_deliveries int;
BEGIN
  IF v_type IS NULL THEN
    RAISE EXCEPTION 'type: is required' USING ERRCODE = '22023';
  ELSIF NOT is_valid_event_type(v_type) THEN
    RAISE EXCEPTION 'type: must be 1-255 characters of A-Z a-z 0-9 . _ : -' USING ERRCODE = '22023';
  ELSIF v_type LIKE 'webhookd.%' THEN
    RAISE EXCEPTION 'type: types starting with "webhookd." are reserved for webhookd''s own events'
      USING ERRCODE = '22023';
  END IF;
  IF payload IS NULL THEN
    RAISE EXCEPTION 'payload: is required' USING ERRCODE = '22023';
  END IF;
  BEGIN
    -- json, not jsonb: it checks the syntax alone, as the API does (jsonb would refuse
    -- \u0000 and fold duplicate keys); the text itself is what is kept.
    v_doc := payload::json;
  EXCEPTION WHEN invalid_text_representation THEN
    RAISE EXCEPTION 'payload: must be a JSON object' USING ERRCODE = '22023';
  END;
  IF json_typeof(v_doc) <> 'object' THEN
    RAISE EXCEPTION 'payload: must be a JSON object' USING ERRCODE = '22023';
  END IF;
  -- The API's limits: its body size (webhookd.max_payload_bytes when the operator set it
  -- for the database, else WEBHOOKD_MAX_PAYLOAD_BYTES' default) and nesting depth.
  IF octet_length(payload) > coalesce(nullif(current_setting('webhookd.max_payload_bytes', true), '')::bigint,
                                      262144) THEN
    RAISE EXCEPTION 'payload: is larger than the largest accepted body (webhookd.max_payload_bytes, 262144 bytes unless set)'
      USING ERRCODE = '22023';
  END IF;
  IF json_depth_exceeds(payload, 64) THEN
    RAISE EXCEPTION 'payload: JSON nested deeper than 64 levels' USING ERRCODE = '22023';
  END IF;
  IF v_tenant IS NOT NULL AND NOT is_valid_tenant_id(v_tenant) THEN
    RAISE EXCEPTION 'tenant_id: must be 1-128 characters of A-Z a-z 0-9 . _ : -'
      USING ERRCODE = '22023';
  END IF;
  IF idempotency_key IS NOT NULL AND idempotency_key !~ '^[!-~]{1,255}$' THEN
    RAISE EXCEPTION 'Idempotency-Key: must be 1-255 visible ASCII characters'
      USING ERRCODE = '22023';
  END IF;
  IF publish.destination_id IS NOT NULL THEN
    IF publish.destination_id !~ '^dst_[0-9]{1,18}$' THEN
      RAISE EXCEPTION 'destination_id: no destination with that id' USING ERRCODE = '22023';
    END IF;
    SELECT d.id, d.tenant_id INTO v_target, v_target_tenant FROM destinations d
     WHERE d.id = substr(publish.destination_id, 5)::bigint AND d.deleted_at IS NULL;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'destination_id: no destination with that id' USING ERRCODE = '22023';
    ELSIF v_target_tenant IS DISTINCT FROM v_tenant THEN
      IF v_tenant IS NOT NULL THEN
        RAISE EXCEPTION 'destination_id: is not a destination of the event''s tenant'
          USING ERRCODE = '22023';
      END IF;
      RAISE EXCEPTION 'destination_id: is a tenant''s destination; the event has no tenant_id'
        USING ERRCODE = '22023';
    END IF;
  END IF;

  IF idempotency_key IS NOT NULL THEN
    -- The call's arguments stand for the request body.
    v_hash := encode(sha256(convert_to(
      json_build_array('sql', v_type, payload, v_tenant, publish.destination_id)::text, 'UTF8')),
      'hex');
    -- Waits for a concurrent holder of the same key, as the API does.
    -- Keys are the event's tenant's: two tenants' producers cannot collide.
    INSERT INTO idempotency_keys AS k (tenant_scope, key, request_hash, event_id)
    VALUES (coalesce(v_tenant, ''), idempotency_key, v_hash, 0)
    ON CONFLICT (tenant_scope, key) DO UPDATE SET request_hash = EXCLUDED.request_hash,
       event_id = 0, created_at = now()
     WHERE k.created_at < now() - interval '24 hours'
    RETURNING k.event_id INTO v_event;
    IF NOT FOUND THEN
      SELECT k.request_hash, k.event_id INTO v_held FROM idempotency_keys k
       WHERE k.tenant_scope = coalesce(v_tenant, '') AND k.key = idempotency_key;
      IF v_held.request_hash <> v_hash THEN
        RAISE EXCEPTION 'Idempotency-Key: was already used with a different request body'
          USING ERRCODE = '22023';
      END IF;
      RETURN 'evt_' || v_held.event_id;
    END IF;
  END IF;

  INSERT INTO events (type, payload, tenant_id) VALUES (v_type, payload, v_tenant)
  RETURNING id INTO v_event;
  IF idempotency_key IS NOT NULL THEN
    UPDATE idempotency_keys k SET event_id = v_event
     WHERE k.tenant_scope = coalesce(v_tenant, '') AND k.key = idempotency_key;
  END IF;

  -- The fan-out rule of store/pg/sql/fan_out.sql and fan_out_targeted.sql.
  IF v_target IS NOT NULL THEN
    INSERT INTO deliveries (event_id, destination_id, tenant_id, next_attempt_at)
    SELECT v_event, d.id, d.tenant_id, now() FROM destinations d
     WHERE d.id = v_target AND d.enabled AND d.deleted_at IS NULL;
  ELSE
    INSERT INTO deliveries (event_id, destination_id, tenant_id, next_attempt_at)
    SELECT v_event, d.id, d.tenant_id, now() FROM destinations d
     WHERE d.enabled AND d.deleted_at IS NULL
       AND coalesce(d.tenant_id, '') = coalesce(v_tenant, '')
       AND event_type_matches(d.event_types, v_type)  -- a few rows, once per call
     ORDER BY d.id;
  END IF;
  GET DIAGNOSTICS v_deliveries = ROW_COUNT;
  -- Delivered to listeners only when the caller's transaction commits; never if it
  -- rolls back. The channel is store/pg/locks.h's kWakeupChannel.
  IF v_deliveries > 0 THEN
    PERFORM pg_notify('webhookd_wakeup', '');
  END IF;
  RETURN 'evt_' || v_event;
END
$$;


-- 3. webhookd_publisher may execute publish(): it must be webhookd's own. A role of that
--    name made by someone else (with a login and a known password, say) would hold that
--    right. 0009 now marks the role it creates and refuses one it did not; an installation
--    migrated before that has an unmarked role, made by 0009 or by a DBA following
--    docs/api.md. It is marked if it holds nothing more than those made; otherwise it
--    loses publish() and the schema, with a warning saying how to give them back.
DO $$
DECLARE
  r pg_roles%ROWTYPE;
BEGIN
  SELECT * INTO r FROM pg_roles WHERE rolname = 'webhookd_publisher';
  IF NOT FOUND OR coalesce(shobj_description(r.oid, 'pg_authid'), '') = 'webhookd publisher role' THEN
    RETURN;
  END IF;
  IF r.rolcanlogin OR r.rolsuper OR r.rolcreaterole OR r.rolcreatedb OR r.rolreplication
     OR r.rolbypassrls OR EXISTS (SELECT 1 FROM pg_auth_members m WHERE m.member = r.oid) THEN
    REVOKE EXECUTE ON FUNCTION webhookd.publish(text, text, text, text, text) FROM webhookd_publisher;
    REVOKE USAGE ON SCHEMA webhookd FROM webhookd_publisher;
    RAISE WARNING 'role webhookd_publisher holds more than webhookd gives it (a login, superuser, create or replication rights, or another role''s membership): publish() was revoked from it. If it is yours, strip it to NOLOGIN, run COMMENT ON ROLE webhookd_publisher IS ''webhookd publisher role'' and grant again as docs/api.md says.';
    RETURN;
  END IF;
  COMMENT ON ROLE webhookd_publisher IS 'webhookd publisher role';
EXCEPTION
  WHEN insufficient_privilege THEN
    RAISE NOTICE 'webhookd_publisher not marked: this user may not comment on roles';
END
$$;
