-- The event catalog and payload filters (docs/catalog.md, docs/filters.md).
--
-- Catalog: one row per event type, with an optional JSON Schema (draft 7) that the API
-- checks payloads against, examples and a deprecated flag. webhookd's own operational
-- types are rows too (builtin), read-only through the API. Every change bumps one
-- generation number in the same transaction; a server caches the catalog with the
-- generation it read, and ingest writes an event only if the generation it was checked
-- against is still the current one, so a payload is never accepted against a schema
-- that another server process has since changed.
--
-- Filters: a destination's `filter` is a SQL/JSON path predicate that the fan-out
-- evaluates with jsonb_path_match(..., silent => true) on the event's payload; only true
-- delivers. The payload becomes jsonb only for an event that has a filtered destination
-- among its candidates, found by one probe of the partial index below, which is empty
-- while no destination has a filter.
CREATE TABLE webhookd.event_types (
  name        text PRIMARY KEY,
  description text NOT NULL DEFAULT '',
  -- json, not jsonb: kept as written (key order, numbers), as the API shows them.
  schema      json,                       -- NULL: any JSON object
  examples    json NOT NULL DEFAULT '[]', -- each a payload that the schema accepts
  deprecated  boolean NOT NULL DEFAULT false,
  builtin     boolean NOT NULL DEFAULT false, -- webhookd's own: not changed by the API
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now());

-- One row: the catalog's generation, and the WEBHOOKD_EVENT_TYPES mode that the last
-- server started wrote, which webhookd.publish() follows.
CREATE TABLE webhookd.event_catalog (
  singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  generation bigint NOT NULL DEFAULT 1,
  mode       text NOT NULL DEFAULT 'open' CHECK (mode IN ('open', 'strict')));
INSERT INTO webhookd.event_catalog DEFAULT VALUES;

CREATE FUNCTION webhookd.bump_catalog_generation() RETURNS trigger
  LANGUAGE plpgsql SET search_path = webhookd AS $$
BEGIN
  UPDATE event_catalog SET generation = generation + 1;
  RETURN NULL;
END
$$;
CREATE TRIGGER event_types_generation
  AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON webhookd.event_types
  FOR EACH STATEMENT EXECUTE FUNCTION webhookd.bump_catalog_generation();

INSERT INTO webhookd.event_types (name, description, schema, builtin) VALUES
('webhookd.destination.circuit_opened',
 'A destination''s circuit opened after consecutive failures; webhookd probes it before sending more.',
 '{"type": "object", "required": ["destination_id", "consecutive_failures"],
   "properties": {"destination_id": {"type": "string"}, "tenant_id": {"type": ["string", "null"]},
                  "consecutive_failures": {"type": "integer", "minimum": 1},
                  "last_error": {"type": ["string", "null"]}}}', true),
('webhookd.destination.recovered',
 'A destination''s circuit closed after a successful probe.',
 '{"type": "object", "required": ["destination_id"],
   "properties": {"destination_id": {"type": "string"}, "tenant_id": {"type": ["string", "null"]},
                  "failing_since": {"type": ["string", "null"], "format": "date-time"}}}', true),
('webhookd.destination.disabled',
 'webhookd disabled a destination: it answered 410 Gone, or failed for longer than WEBHOOKD_DISABLE_AFTER.',
 '{"type": "object", "required": ["destination_id", "reason"],
   "properties": {"destination_id": {"type": "string"}, "tenant_id": {"type": ["string", "null"]},
                  "reason": {"enum": ["gone", "failing"]}}}', true),
('webhookd.delivery.dead_lettered',
 'A delivery gave up and was moved to the dead letters.',
 '{"type": "object", "required": ["dead_letter_id", "delivery_id", "event_id", "destination_id", "reason"],
   "properties": {"dead_letter_id": {"type": "string"}, "delivery_id": {"type": "string"},
                  "event_id": {"type": "string"}, "destination_id": {"type": "string"},
                  "tenant_id": {"type": ["string", "null"]},
                  "reason": {"enum": ["exhausted", "permanent_failure"]}}}', true);

-- The filter as written, and as PostgreSQL compiled it (jsonpath's input is immutable).
ALTER TABLE webhookd.destinations ADD COLUMN filter text,
  ADD COLUMN filter_path jsonpath GENERATED ALWAYS AS (filter::jsonpath) STORED;
-- The fan-out's "does any candidate have a filter?" probe: the expression of
-- destinations_fan_out (0006), over filtered live destinations alone.
CREATE INDEX destinations_filtered ON webhookd.destinations (coalesce(tenant_id, ''))
  WHERE filter IS NOT NULL AND enabled AND deleted_at IS NULL;

-- The payload as the filters see it, or NULL (so no filter delivers it) for the few
-- JSON texts that jsonb refuses though json takes them: \u0000, a lone surrogate, a
-- number beyond numeric's range. An error here would fail the whole fan-out.
CREATE FUNCTION webhookd.payload_jsonb(payload text) RETURNS jsonb
  LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
  RETURN payload::jsonb;
EXCEPTION WHEN OTHERS THEN
  RETURN NULL;
END
$$;

-- Why `filter` may not be a destination's filter, or NULL when it may. The rules keep a
-- filter cheap and unable to fail a fan-out, which runs inside ingest transactions that
-- other tenants' events share:
--  * at most 4,096 bytes, and valid SQL/JSON path syntax (regular expressions included);
--  * a predicate: on an empty object it yields exactly one boolean or unknown;
--  * no variables ($name) and no .datetime(): both can raise errors that silent
--    evaluation does not suppress (an unknown variable; a comparison of dates with and
--    without a time zone), which would fail the whole transaction;
--  * at most one ** and no $ inside a ?(…) filter expression: each of these multiplies the
--    work by the size of the payload; without them a filter visits each value of the
--    payload a bounded number of times;
--  * in like_regex (at most 4 per filter): no back-references, the one feature that
--    backtracks; at most 128 characters and two counted repetitions {n,m} with bounds up
--    to 16, so compiling one (which happens per evaluation once more than 32 different
--    expressions are in use) stays well under a millisecond.
CREATE FUNCTION webhookd.filter_problem(filter text) RETURNS text
  LANGUAGE plpgsql STABLE SET search_path = webhookd AS $$
DECLARE
  v_path jsonpath;
  v_text text;
  v_bare text;
  v_kinds text[];
  v_stack text := '';
  v_ch text;
  v_pattern text;
  v_regexes int := 0;
BEGIN
  IF octet_length(filter) > 4096 THEN
    RETURN 'must be at most 4096 bytes';
  END IF;
  BEGIN
    v_path := filter::jsonpath;
  EXCEPTION WHEN OTHERS THEN
    RETURN 'is not a valid SQL/JSON path predicate: ' || SQLERRM;
  END;
  v_text := v_path::text;  -- normalized: strings double-quoted, variables as $"name"
  v_bare := regexp_replace(v_text, '"(\\.|[^"\\])*"', '""', 'g');
  IF position('$""' IN v_bare) > 0 THEN
    RETURN 'may not use variables ($name): a filter sees the payload ($) alone';
  ELSIF v_bare ~ '\.datetime\(' THEN
    RETURN 'may not use .datetime(); compare RFC 3339 strings instead ($.at >= "2026-01-01")';
  ELSIF length(v_bare) - length(replace(v_bare, '**', '')) > 2 THEN
    RETURN 'may use ** at most once';
  END IF;
  -- $ inside a filter expression: walk the parentheses, "f" for ?( and "g" for (.
  FOR i IN 1 .. length(v_bare) LOOP
    v_ch := substr(v_bare, i, 1);
    IF v_ch = '(' THEN
      v_stack := v_stack || CASE WHEN i > 1 AND substr(v_bare, i - 1, 1) = '?' THEN 'f' ELSE 'g' END;
    ELSIF v_ch = ')' THEN
      v_stack := left(v_stack, -1);
    ELSIF v_ch = '$' AND position('f' IN v_stack) > 0 THEN
      RETURN 'may not use $ inside a filter expression ?(…): use @, the current item';
    END IF;
  END LOOP;
  FOR v_pattern IN SELECT m[1] FROM regexp_matches(v_text, 'like_regex "((\\.|[^"\\])*)"', 'g') m LOOP
    v_regexes := v_regexes + 1;
    IF v_regexes > 4 THEN
      RETURN 'may use like_regex at most 4 times';
    ELSIF length(v_pattern) > 128 THEN
      RETURN 'like_regex patterns may be at most 128 characters long';
    ELSIF v_pattern ~ '\\\\[1-9]' THEN
      RETURN 'may not use back-references (\1 … \9) in like_regex';
    ELSIF (SELECT count(*) > 2 OR coalesce(bool_or(greatest(nullif(q[1], '')::numeric,
                                                            nullif(q[2], '')::numeric) > 16), false)
             FROM regexp_matches(v_pattern, '\{([0-9]*)(?:,([0-9]*))?\}', 'g') q) THEN
      RETURN 'like_regex may use at most two counted repetitions {n,m}, each with bounds up to 16';
    END IF;
  END LOOP;
  SELECT array_agg(jsonb_typeof(v)) INTO v_kinds
    FROM jsonb_path_query('{}'::jsonb, v_path, '{}', true) v;
  IF v_kinds IS NULL OR cardinality(v_kinds) <> 1 OR v_kinds[1] NOT IN ('boolean', 'null') THEN
    RETURN 'must be a predicate, true or false for a payload: a comparison, exists(…), '
           'like_regex, starts with, is unknown, or !, && and || of them';
  END IF;
  RETURN NULL;
END
$$;

-- Whether `filter` delivers `payload`, for the console's filter editor (POST
-- /v1/filters/test): the fan-out's test exactly. A filter that may not be one raises
-- 22023 with filter_problem's reason.
CREATE FUNCTION webhookd.filter_test(filter text, payload jsonb) RETURNS boolean
  LANGUAGE plpgsql STABLE SET search_path = webhookd AS $$
DECLARE
  v_problem text := filter_problem(filter);
BEGIN
  IF v_problem IS NOT NULL THEN
    RAISE EXCEPTION 'filter: %', v_problem USING ERRCODE = '22023';
  END IF;
  RETURN coalesce(jsonb_path_match(payload, filter::jsonpath, '{}', true), false);
END
$$;

-- publish() of 0018 with the catalog's strict mode and the destinations' filters. The
-- schema is not checked here (docs/catalog.md): JSON Schema runs in the API alone.
CREATE OR REPLACE FUNCTION webhookd.publish(type text, payload text, tenant_id text DEFAULT NULL,
                                 destination_id text DEFAULT NULL,
                                 idempotency_key text DEFAULT NULL,
                                 ordering_key text DEFAULT NULL)
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
  v_filtered jsonb;
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
  IF publish.ordering_key IS NOT NULL
     AND (char_length(publish.ordering_key) NOT BETWEEN 1 AND 255
          OR publish.ordering_key ~ '[\x01-\x1f\x7f]') THEN
    RAISE EXCEPTION 'ordering_key: must be 1-255 characters without control characters'
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
      json_build_array('sql', v_type, payload, v_tenant, publish.destination_id,
                       publish.ordering_key)::text, 'UTF8')),
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

  INSERT INTO events (type, payload, tenant_id, ordering_key)
  VALUES (v_type, payload, v_tenant, publish.ordering_key)
  RETURNING id INTO v_event;
  IF idempotency_key IS NOT NULL THEN
    UPDATE idempotency_keys k SET event_id = v_event
     WHERE k.tenant_scope = coalesce(v_tenant, '') AND k.key = idempotency_key;
  END IF;

  -- The fan-out rule of store/pg/sql/fan_out.sql and fan_out_targeted.sql.
  IF v_target IS NOT NULL THEN
    INSERT INTO deliveries (event_id, destination_id, tenant_id, next_attempt_at, ordering_key)
    SELECT v_event, d.id, d.tenant_id, now(), publish.ordering_key FROM destinations d
     WHERE d.id = v_target AND d.enabled AND d.deleted_at IS NULL;
  ELSE
    -- The payload as jsonb only when a candidate has a filter (0019's header).
    IF EXISTS (SELECT 1 FROM destinations d
                WHERE d.filter IS NOT NULL AND d.enabled AND d.deleted_at IS NULL
                  AND coalesce(d.tenant_id, '') = coalesce(v_tenant, '')
                  AND event_type_matches(d.event_types, v_type)) THEN
      v_filtered := payload_jsonb(payload);
    END IF;
    INSERT INTO deliveries (event_id, destination_id, tenant_id, next_attempt_at, ordering_key)
    SELECT v_event, d.id, d.tenant_id, now(), publish.ordering_key FROM destinations d
     WHERE d.enabled AND d.deleted_at IS NULL
       AND coalesce(d.tenant_id, '') = coalesce(v_tenant, '')
       AND event_type_matches(d.event_types, v_type)  -- a few rows, once per call
       AND (d.filter_path IS NULL OR jsonb_path_match(v_filtered, d.filter_path, '{}', true))
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
