-- Publishing from SQL, inside the application's own transaction: the event and its
-- deliveries exist if and only if that transaction commits (the outbox pattern without
-- an outbox). webhookd.publish validates as POST /v1/events does, with the same
-- messages, raised with SQLSTATE 22023 as "<field>: <message>".

-- The rules shared with the API's C++ (core/validation.h); a pgtest runs one table of
-- cases through both, so they cannot drift apart.
CREATE FUNCTION webhookd.is_valid_event_type(t text) RETURNS boolean
  LANGUAGE sql IMMUTABLE AS $$ SELECT t ~ '^[A-Za-z0-9._:-]{1,255}$' $$;
CREATE FUNCTION webhookd.is_valid_tenant_id(t text) RETURNS boolean
  LANGUAGE sql IMMUTABLE AS $$ SELECT t ~ '^[A-Za-z0-9._:-]{1,128}$' $$;

CREATE FUNCTION webhookd.publish(type text, payload text, tenant_id text DEFAULT NULL,
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
    INSERT INTO idempotency_keys AS k (key, request_hash, event_id)
    VALUES (idempotency_key, v_hash, 0)
    ON CONFLICT (key) DO UPDATE SET request_hash = EXCLUDED.request_hash, event_id = 0,
       created_at = now()
     WHERE k.created_at < now() - interval '24 hours'
    RETURNING k.event_id INTO v_event;
    IF NOT FOUND THEN
      SELECT k.request_hash, k.event_id INTO v_held FROM idempotency_keys k
       WHERE k.key = idempotency_key;
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
    UPDATE idempotency_keys k SET event_id = v_event WHERE k.key = idempotency_key;
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

REVOKE ALL ON FUNCTION webhookd.publish(text, text, text, text, text) FROM PUBLIC;

-- A role to grant to the application's database user: EXECUTE on publish and nothing
-- else (the function runs with its owner's rights). Roles belong to the whole cluster,
-- so it may exist already; a migrating user without CREATEROLE leaves it to the DBA
-- (docs/api.md says how). The role webhookd creates is marked with a comment; one of that
-- name made by someone else (with a login and a known password, say) is not granted
-- anything: migrate stops and says so.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'webhookd_publisher') THEN
    CREATE ROLE webhookd_publisher NOLOGIN;
    COMMENT ON ROLE webhookd_publisher IS 'webhookd publisher role';
  END IF;
EXCEPTION
  WHEN insufficient_privilege THEN
    RAISE NOTICE 'webhookd_publisher not created: this user may not create roles';
  WHEN duplicate_object OR unique_violation THEN
    NULL;  -- another database's migration made it at the same moment
END
$$;
DO $$
DECLARE
  r pg_roles%ROWTYPE;
BEGIN
  SELECT * INTO r FROM pg_roles WHERE rolname = 'webhookd_publisher';
  IF FOUND THEN
    IF coalesce(shobj_description(r.oid, 'pg_authid'), '') <> 'webhookd publisher role' THEN
      RAISE EXCEPTION 'role webhookd_publisher exists but was not created by webhookd migrate: webhookd will not grant it publish(). If a DBA made it for webhookd, make it NOLOGIN and run COMMENT ON ROLE webhookd_publisher IS ''webhookd publisher role''; otherwise drop or rename it.';
    END IF;
    GRANT USAGE ON SCHEMA webhookd TO webhookd_publisher;
    GRANT EXECUTE ON FUNCTION webhookd.publish(text, text, text, text, text)
      TO webhookd_publisher;
  END IF;
END
$$;
