-- The delivery gauges, counted from the queue (store/pg/schema/delivery_gauges.sql), not
-- from the deliveries; the open circuits through their partial index.
SELECT g.pending, g.in_flight, g.unfinished_over_24h,
       (SELECT count(*) FROM destinations
         WHERE circuit <> 'closed' AND enabled AND deleted_at IS NULL)
  FROM delivery_gauges() g
