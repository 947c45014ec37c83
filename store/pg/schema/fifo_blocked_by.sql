-- What a waiting delivery of a fifo destination waits for: the oldest unfinished delivery
-- of its key before it (the older of its oldest pending one and its oldest in flight
-- before it), else the oldest of its key in flight, else (under 'block') the earliest
-- open dead letter's delivery of its key before it. Read from the queue's fifo indexes.
CREATE OR REPLACE FUNCTION webhookd.fifo_blocked_by(delivery bigint, dest bigint, key text)
 RETURNS bigint
 LANGUAGE sql
 STABLE
 SET search_path TO 'webhookd'
AS $function$
  SELECT coalesce(
           (SELECT min(u.id) FROM (
              (SELECT x.id FROM delivery_queue x
                WHERE x.destination_id = dest AND x.fifo AND x.claim_token IS NULL
                  AND coalesce(x.ordering_key, '') = coalesce(key, '') AND x.id < delivery
                ORDER BY coalesce(x.ordering_key, ''), x.id LIMIT 1)
              UNION ALL
              (SELECT min(x.id) FROM delivery_queue x
                WHERE x.destination_id = dest AND x.fifo AND x.claim_token IS NOT NULL
                  AND coalesce(x.ordering_key, '') = coalesce(key, '')
                  AND x.id < delivery)) u),
           (SELECT min(x.id) FROM delivery_queue x
             WHERE x.destination_id = dest AND x.fifo AND x.claim_token IS NOT NULL
               AND coalesce(x.ordering_key, '') = coalesce(key, '')),
           CASE WHEN t.on_dead_letter = 'block' THEN
             (SELECT l.delivery_id FROM dead_letters l JOIN deliveries b ON b.id = l.delivery_id
               WHERE l.destination_id = dest AND l.replayed_at IS NULL
                 AND l.dismissed_at IS NULL AND l.delivery_id < delivery
                 AND coalesce(b.ordering_key, '') = coalesce(key, '')
               ORDER BY l.delivery_id LIMIT 1) END)
    FROM destinations t WHERE t.id = dest AND t.ordering = 'fifo'
$function$;
