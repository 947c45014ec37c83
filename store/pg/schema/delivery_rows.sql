-- A delivery as the API shows it, in the order ToDelivery reads it: one definition for
-- every statement that answers deliveries (get_delivery, event_deliveries,
-- list_deliveries, list_deliveries_of_status), which each wrote the same columns and the
-- same rule before. A plain view over one table is pulled up into the statement that
-- reads it, so each statement keeps its own index and plan.
CREATE OR REPLACE VIEW webhookd.delivery_rows AS
 SELECT deliveries.id,
    deliveries.event_id,
    deliveries.destination_id,
    deliveries.status,
    deliveries.attempt_count,
    deliveries.next_attempt_at,
    deliveries.last_attempt_at,
    deliveries.last_status_code,
    deliveries.last_error,
    deliveries.created_at,
    deliveries.updated_at,
    deliveries.tenant_id,
    deliveries.ordering_key,
        CASE
            WHEN (deliveries.fifo AND (deliveries.status = 'pending'::text)) THEN fifo_blocked_by(deliveries.id, deliveries.destination_id, deliveries.fifo, deliveries.ordering_key, deliveries.status)
            ELSE NULL::bigint
        END AS blocked_by
   FROM deliveries;
