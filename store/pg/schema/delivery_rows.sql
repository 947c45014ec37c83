-- A delivery as the API shows it, in the order ToDelivery reads it: one definition for
-- every statement that answers deliveries (get_delivery, event_deliveries,
-- list_deliveries, list_deliveries_of_status). The history row holds what happened; an
-- unfinished delivery's queue row (migrations/0035_delivery_queue.sql) when it is due
-- (one in its destination's feed instead of dead letters: when the feed hands it out,
-- migrations/0043_feed_fallback.sql) and whether it is in flight. A plain view is pulled up into the statement that reads
-- it, so each statement keeps its own index and plan, with one key probe of the queue
-- per row.
CREATE OR REPLACE VIEW webhookd.delivery_rows AS
 SELECT d.id,
    d.event_id,
    d.destination_id,
        CASE
            WHEN (q.claim_token IS NOT NULL) THEN 'in_flight'::text
            ELSE d.status
        END AS status,
    d.attempt_count,
    COALESCE(q.feed_at, q.next_attempt_at) AS next_attempt_at,
    d.last_attempt_at,
    d.last_status_code,
    d.last_error,
    d.created_at,
    d.updated_at,
    d.tenant_id,
    d.ordering_key,
        CASE
            WHEN (q.fifo AND (q.claim_token IS NULL)) THEN fifo_blocked_by(d.id, d.destination_id, d.ordering_key)
            ELSE NULL::bigint
        END AS blocked_by
   FROM (deliveries d
     LEFT JOIN delivery_queue q ON ((q.id = d.id)));
