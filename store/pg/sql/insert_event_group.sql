-- A whole group of ingests in one statement: ids drawn first so each row's deliveries
-- can be matched back to its request by `ord`. A row with a key hash ($3) is ingested only
-- if that API key is live (neither revoked nor expired) and may publish; otherwise its
-- `ord` comes back with a NULL id. $4: each row's tenant (NULL: none). Each event reaches
-- the destinations of webhookd.fan_out (store/pg/schema/fan_out.sql: tenant, type,
-- filter), inlined here, so each event probes the index of its own tenant. $5: each row's
-- ordering key (NULL: none). $6: the catalog generation each payload was checked against
-- (0: unchecked); a row checked against an older catalog is not ingested and comes back
-- `stale`, for its caller to check again. $7, $8: each row's trace context (NULL
-- traceparent: a fresh trace). $9: the wake-up channel (kWakeupChannel), notified in the
-- statement itself when it made a delivery, which spares the group a round trip. $10:
-- each row's subjects as a JSON array of strings (NULL: none), as a text[] cannot hold
-- lists of different lengths.
-- The event type keys are computed once per distinct type of the group, not per row,
-- and the sequence is named once per statement, not per row.
-- The parameters, bound by name (NamedParams), $1 to $8 one element per row:
-- @param $1 types
-- @param $2 payloads
-- @param $3 key_hashes
-- @param $4 tenant_ids
-- @param $5 ordering_keys
-- @param $6 catalog_generations
-- @param $7 traceparents
-- @param $8 tracestates
-- @param $9 wakeup_channel
-- @param $10 subject_lists
WITH input AS (
  SELECT t.type, t.payload, t.key_hash, t.tenant_id, t.ordering_key, t.generation,
         t.traceparent, t.tracestate, t.subject_list, t.ord
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[],
                $7::text[], $8::text[], $10::text[])
         WITH ORDINALITY AS t(type, payload, key_hash, tenant_id, ordering_key, generation,
                              traceparent, tracestate, subject_list, ord)),
catalog AS (SELECT generation FROM event_catalog),
kinds AS MATERIALIZED (
  SELECT d.type, event_type_keys(d.type) AS keys FROM (SELECT DISTINCT type FROM input) d),
ids AS (
  SELECT ord, type, payload, tenant_id, ordering_key, traceparent, tracestate, subject_list,
         (SELECT k.keys FROM kinds k WHERE k.type = x.type) AS keys,
         history_id(nextval((SELECT pg_get_serial_sequence('events', 'id')))) AS id
    FROM input x
   WHERE (x.generation = 0 OR x.generation = (SELECT generation FROM catalog))
     AND (x.key_hash IS NULL
      OR EXISTS (SELECT 1 FROM api_keys k
                  WHERE k.key_hash = x.key_hash AND k.revoked_at IS NULL
                    AND (k.expires_at IS NULL OR k.expires_at > now())
                    AND k.role IN ('publisher', 'admin')))),
ev AS (
  INSERT INTO events (id, type, payload, tenant_id, ordering_key, traceparent, tracestate,
                      subjects)
  SELECT id, type, payload, tenant_id, ordering_key, coalesce(traceparent, new_traceparent()),
         tracestate,
         CASE WHEN subject_list IS NOT NULL
              THEN ARRAY(SELECT json_array_elements_text(subject_list::json)) END
    FROM ids ORDER BY ord RETURNING id),
dl AS (
  INSERT INTO deliveries (event_id, destination_id, tenant_id, ordering_key)
  SELECT i.id, d.id, i.tenant_id, i.ordering_key
    FROM ids i CROSS JOIN LATERAL webhookd.fan_out(i.tenant_id, i.keys, i.payload) d(id)
   ORDER BY i.id, d.id
  RETURNING id, event_id, destination_id),
woken AS (SELECT pg_notify($9, '') FROM (SELECT 1 FROM dl LIMIT 1) x)
SELECT x.ord, i.id, now(), d.id, d.destination_id,
       x.generation <> 0 AND x.generation <> (SELECT generation FROM catalog) AS stale,
       (SELECT count(*) FROM woken) AS woken
  FROM input x LEFT JOIN ids i ON i.ord = x.ord LEFT JOIN dl d ON d.event_id = i.id
 ORDER BY x.ord, d.id
