-- A delivery as the API shows it, in the order ToDelivery reads it: one definition for
-- every statement that answers deliveries (get_delivery, event_deliveries,
-- list_deliveries, list_deliveries_of_status), which each wrote the same columns and the
-- same rule before. A plain view over one table is pulled up into the statement that
-- reads it, so each statement keeps its own index and plan.
CREATE VIEW webhookd.delivery_rows AS
  SELECT id, event_id, destination_id, status, attempt_count, next_attempt_at,
         last_attempt_at, last_status_code, last_error, created_at, updated_at, tenant_id,
         ordering_key,
         -- only a waiting fifo delivery has anything to wait for: no call for the others
         CASE WHEN fifo AND status = 'pending'
              THEN webhookd.fifo_blocked_by(id, destination_id, fifo, ordering_key, status)
         END AS blocked_by
    FROM webhookd.deliveries;
