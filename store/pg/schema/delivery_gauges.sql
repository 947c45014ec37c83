-- The gauges: pending, in flight, and unfinished deliveries created over 24 hours ago,
-- counted from the queue (migrations/0035_delivery_queue.sql), which holds only the
-- unfinished ones: the cost follows the backlog, never the history. Counters kept beside
-- every statement that changes a delivery (transition tables on each claim, outcome and
-- ingest) cost more per delivery than this scan costs per scrape.
CREATE OR REPLACE FUNCTION webhookd.delivery_gauges(OUT pending bigint, OUT in_flight bigint, OUT unfinished_over_24h bigint)
 RETURNS record
 LANGUAGE sql
 STABLE
 SET search_path TO 'webhookd'
AS $function$
  SELECT count(*) FILTER (WHERE q.claim_token IS NULL),
         count(*) FILTER (WHERE q.claim_token IS NOT NULL),
         count(*) FILTER (WHERE date_trunc('minute', q.created_at) < now() - interval '24 hours')
    FROM delivery_queue q
$function$;
