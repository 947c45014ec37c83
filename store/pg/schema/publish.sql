-- webhookd.publish: an event and its deliveries written in the caller's transaction, so
-- the deliveries exist if and only if that transaction commits (the outbox pattern
-- without an outbox). It validates as POST /v1/events does, with the same messages,
-- raised with SQLSTATE 22023 as "<field>: <message>", and takes the producer's W3C trace
-- context (docs/tracing.md): a valid traceparent is kept as given, an invalid one is
-- ignored and the event gets a fresh trace.
--
-- Runs with its owner's rights, so a caller needs EXECUTE alone. Nobody but the owner
-- holds it from PUBLIC; webhookd_publisher gets it below only when that role is
-- webhookd's own (marked by the baseline migration, which made it) and holds the schema
-- (the baseline grants it; a role webhookd did not make never got it, or lost it). A new
-- signature is a new function: drop the old one in a migration, and change the grant's
-- signature here.
CREATE OR REPLACE FUNCTION webhookd.publish(type text, payload text, tenant_id text DEFAULT NULL::text, destination_id text DEFAULT NULL::text, idempotency_key text DEFAULT NULL::text, ordering_key text DEFAULT NULL::text, traceparent text DEFAULT NULL::text, tracestate text DEFAULT NULL::text, subjects text[] DEFAULT NULL::text[])
 RETURNS text
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'webhookd', 'pg_temp'
AS $function$
DECLARE
  v_type text := publish.type;
  v_tenant text := publish.tenant_id;
  v_target bigint;
  v_hash text;
  v_event bigint;
  v_held record;
  v_keys text[];
  v_deliveries int;
  v_traceparent text := valid_traceparent(publish.traceparent);
  v_tracestate text;
  v_subjects text[];
BEGIN
  -- A tracestate goes with a valid traceparent only, and only as a printable list of at
  -- most 512 bytes; an invalid context is ignored (a fresh trace), never refused.
  IF v_traceparent IS NOT NULL AND char_length(publish.tracestate) <= 512
     AND publish.tracestate ~ '^[ -~]*$' THEN
    v_tracestate := nullif(btrim(publish.tracestate, E' \t'), '');
  END IF;
  v_target := publish_arguments(v_type, payload, v_tenant, publish.destination_id,
                                idempotency_key, publish.ordering_key, publish.subjects);
  -- Each subject once, in the order first given; none is NULL, as an empty list.
  v_subjects := nullif(ARRAY(SELECT s FROM unnest(publish.subjects) WITH ORDINALITY u(s, n)
                              GROUP BY s ORDER BY min(n)), '{}');

  IF idempotency_key IS NOT NULL THEN
    -- The call's arguments stand for the request body (the subjects only when given,
    -- so a call without them hashes as it did before they existed).
    v_hash := encode(sha256(convert_to(
      CASE WHEN v_subjects IS NULL
           THEN json_build_array('sql', v_type, payload, v_tenant, publish.destination_id,
                                 publish.ordering_key)
           ELSE json_build_array('sql', v_type, payload, v_tenant, publish.destination_id,
                                 publish.ordering_key, v_subjects) END::text, 'UTF8')),
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

  INSERT INTO events (type, payload, tenant_id, ordering_key, traceparent, tracestate,
                      subjects)
  VALUES (v_type, payload, v_tenant, publish.ordering_key,
          coalesce(v_traceparent, new_traceparent()), v_tracestate, v_subjects)
  RETURNING id INTO v_event;
  IF idempotency_key IS NOT NULL THEN
    UPDATE idempotency_keys k SET event_id = v_event
     WHERE k.tenant_scope = coalesce(v_tenant, '') AND k.key = idempotency_key;
  END IF;

  -- Targeted as store/pg/sql/fan_out_targeted.sql, else fanned out by webhookd.fan_out.
  IF v_target IS NOT NULL THEN
    INSERT INTO deliveries (event_id, destination_id, tenant_id, ordering_key)
    SELECT v_event, d.id, d.tenant_id, publish.ordering_key FROM destinations d
     WHERE d.id = v_target AND d.enabled AND d.deleted_at IS NULL;
  ELSE
    -- The rule of every fan-out (fan_out.sql); the keys in a variable, computed once.
    v_keys := event_type_keys(v_type);
    INSERT INTO deliveries (event_id, destination_id, tenant_id, ordering_key)
    SELECT v_event, d.id, v_tenant, publish.ordering_key
      FROM fan_out(v_tenant, v_keys, publish.payload) d(id)
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
$function$;

REVOKE ALL ON FUNCTION webhookd.publish(text, text, text, text, text, text, text, text, text[]) FROM PUBLIC;

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname = 'webhookd_publisher'
                AND shobj_description(r.oid, 'pg_authid') = 'webhookd publisher role')
     AND has_schema_privilege('webhookd_publisher', 'webhookd', 'USAGE') THEN
    GRANT EXECUTE ON FUNCTION webhookd.publish(text, text, text, text, text, text, text, text, text[])
      TO webhookd_publisher;
  END IF;
END
$$;
