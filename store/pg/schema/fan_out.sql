-- webhookd.fan_out: the destinations an event reaches, the one statement of the fan-out rule
-- that every writer of deliveries uses (REST ingest, grouped ingest, webhookd.publish()
-- and the operational events of record_outcomes.sql). A destination gets the event when
--  * it is the event's tenant's (a tenant-less event: a tenant-less destination), written
--    as the expression of the destinations_fan_out index (migrations/0034_baseline.sql) so
--    each call reads that tenant's destinations alone, however many others there are;
--  * it is enabled and not deleted;
--  * its event_types name the type (event_type_matches.sql, on the keys of
--    event_type_keys.sql), an empty list standing for every type but webhookd's own
--    (the keys of a "webhookd." type hold 'webhookd.*'): those reach only a destination
--    that names them (docs/api.md, operational events);
--  * its filter, if any, is true for the payload, evaluated silently (unknown or an
--    error is no delivery). The payload is made jsonb once per call, and only when some
--    candidate has a filter: one probe of destinations_filtered (0019).
-- `keys` is event_type_keys(type), computed by the caller: once per distinct type of a
-- group, and as a column, never an expression, since the body uses it several times.
--
-- LANGUAGE sql, STABLE, neither STRICT nor SECURITY DEFINER nor SET: the planner inlines
-- it into the caller's statement (FROM fan_out(...)), so it costs no call, and a group's
-- statement stays one statement. Hence the qualified names (no search_path of its own).
-- OFFSET 0 fences: the doc is computed once per call, not once per destination; and the
-- whole is a subquery each event probes the index with, where a join planned for a group
-- of unknown size and tenants hashed every destination of every tenant.
-- tests/store/pg/fan_out_pgtest.cc holds every caller to the rule.
CREATE OR REPLACE FUNCTION webhookd.fan_out(tenant text, keys text[], payload text)
 RETURNS SETOF bigint
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$
  SELECT t.id
    FROM (SELECT CASE WHEN EXISTS (
                   SELECT 1 FROM webhookd.destinations f
                    WHERE f.filter IS NOT NULL AND f.enabled AND f.deleted_at IS NULL
                      AND coalesce(f.tenant_id, '') = coalesce(fan_out.tenant, '')
                      AND ((cardinality(f.event_types) = 0
                            AND NOT fan_out.keys @> '{webhookd.*}')
                           OR f.event_types && fan_out.keys))
                 THEN webhookd.payload_jsonb(fan_out.payload) END AS doc
          OFFSET 0) j,
         webhookd.destinations t
   WHERE t.enabled AND t.deleted_at IS NULL
     AND coalesce(t.tenant_id, '') = coalesce(fan_out.tenant, '')
     AND ((cardinality(t.event_types) = 0 AND NOT fan_out.keys @> '{webhookd.*}')
          OR t.event_types && fan_out.keys)
     AND (t.filter_path IS NULL OR jsonb_path_match(j.doc, t.filter_path, '{}', true))
  OFFSET 0
$function$;
