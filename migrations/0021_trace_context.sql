-- W3C trace context (docs/tracing.md). Each event keeps the `traceparent` its attempts
-- continue: the one that names webhookd's ingest span (in the producer's trace when the
-- producer sent one), and the producer's `tracestate`. Events that come in another way
-- (publish(), the operational events) get a fresh trace from the column's default; the
-- default is set after the column is added, so the rows already there are not rewritten
-- (they stay NULL, and each of their attempts starts a trace of its own).
CREATE FUNCTION webhookd.new_traceparent() RETURNS text LANGUAGE sql VOLATILE AS $$
  SELECT '00-' || replace(gen_random_uuid()::text, '-', '') || '-'
         || left(replace(gen_random_uuid()::text, '-', ''), 16) || '-01'
$$;
ALTER TABLE webhookd.events ADD COLUMN traceparent text, ADD COLUMN tracestate text;
ALTER TABLE webhookd.events ALTER COLUMN traceparent SET DEFAULT webhookd.new_traceparent();

-- The claim hands each delivery its event's trace context and tenant. The claim of 0020
-- is kept under another name and wrapped, rather than written out again, and its order
-- is kept. Each claimed row finds its event by primary key (LATERAL ... LIMIT 1): a
-- plain join is planned for the thousand rows a set-returning function is assumed to
-- return, and merged or hashed against the whole events table on every claim (the drain
-- fell from 9,700/s to 4,300/s at 50,000 events, and it would keep falling as events
-- grow). plpgsql, so that each connection plans it once.
ALTER FUNCTION webhookd.claim_due(int, bigint, bigint, int) RENAME TO claim_due_untraced;
ALTER FUNCTION webhookd.claim_due_untraced(int, bigint, bigint, int) ROWS 128;
CREATE FUNCTION webhookd.claim_due(batch int, lease_us bigint, token bigint, default_cap int)
  RETURNS TABLE (delivery_id bigint, event_id bigint, event_type text, payload text,
                 event_created_at timestamptz, destination_id bigint, url text, secret text,
                 headers text, attempt_count int, cycle_attempts int, created_at timestamptz,
                 kind text, clean boolean, egress text, traceparent text, tracestate text,
                 tenant_id text)
  LANGUAGE plpgsql VOLATILE
  SET search_path = webhookd
  AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  SELECT c.delivery_id, c.event_id, c.event_type, c.payload, c.event_created_at,
         c.destination_id, c.url, c.secret, c.headers, c.attempt_count, c.cycle_attempts,
         c.created_at, c.kind, c.clean, c.egress, e.traceparent, e.tracestate, e.tenant_id
    FROM claim_due_untraced(batch, lease_us, token, default_cap) WITH ORDINALITY AS c
    LEFT JOIN LATERAL (SELECT x.traceparent, x.tracestate, x.tenant_id FROM events x
                        WHERE x.id = c.event_id LIMIT 1) e ON true
   ORDER BY c.ordinality;
END
$$;
