-- publish()'s arguments checked as POST /v1/events checks a body, with the same messages,
-- raised with SQLSTATE 22023 as "<field>: <message>" (publish.sql). Returns the id of the
-- destination the event names, or NULL when it names none.
CREATE OR REPLACE FUNCTION webhookd.publish_arguments(type text, payload text, tenant_id text, destination_id text, idempotency_key text, ordering_key text, subjects text[])
 RETURNS bigint
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'webhookd', 'pg_temp'
AS $function$
DECLARE
  v_type text := publish_arguments.type;
  v_tenant text := publish_arguments.tenant_id;
  v_target bigint;
  v_target_tenant text;
  v_doc json;
BEGIN
  IF v_type IS NULL THEN
    RAISE EXCEPTION 'type: is required' USING ERRCODE = '22023';
  ELSIF NOT is_valid_event_type(v_type) THEN
    RAISE EXCEPTION 'type: must be 1-255 characters of A-Z a-z 0-9 . _ : -' USING ERRCODE = '22023';
  ELSIF v_type LIKE 'webhookd.%' THEN
    RAISE EXCEPTION 'type: types starting with "webhookd." are reserved for webhookd''s own events'
      USING ERRCODE = '22023';
  END IF;
  IF (SELECT c.mode FROM event_catalog c) = 'strict'
     AND NOT EXISTS (SELECT 1 FROM event_types t WHERE t.name = v_type) THEN
    RAISE EXCEPTION 'type: is not in the event catalog (WEBHOOKD_EVENT_TYPES is strict)'
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
  IF publish_arguments.ordering_key IS NOT NULL
     AND (char_length(publish_arguments.ordering_key) NOT BETWEEN 1 AND 255
          OR publish_arguments.ordering_key ~ '[\x01-\x1f\x7f]') THEN
    RAISE EXCEPTION 'ordering_key: must be 1-255 characters without control characters'
      USING ERRCODE = '22023';
  END IF;
  IF subjects_problem(publish_arguments.subjects) IS NOT NULL THEN
    RAISE EXCEPTION 'subjects: %', subjects_problem(publish_arguments.subjects)
      USING ERRCODE = '22023';
  END IF;
  IF idempotency_key IS NOT NULL AND idempotency_key !~ '^[!-~]{1,255}$' THEN
    RAISE EXCEPTION 'Idempotency-Key: must be 1-255 visible ASCII characters'
      USING ERRCODE = '22023';
  END IF;
  IF publish_arguments.destination_id IS NOT NULL THEN
    IF publish_arguments.destination_id !~ '^dst_[0-9]{1,18}$' THEN
      RAISE EXCEPTION 'destination_id: no destination with that id' USING ERRCODE = '22023';
    END IF;
    SELECT d.id, d.tenant_id INTO v_target, v_target_tenant FROM destinations d
     WHERE d.id = substr(publish_arguments.destination_id, 5)::bigint AND d.deleted_at IS NULL;
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
  RETURN v_target;
END
$function$;

REVOKE ALL ON FUNCTION webhookd.publish_arguments(text, text, text, text, text, text, text[]) FROM PUBLIC;
