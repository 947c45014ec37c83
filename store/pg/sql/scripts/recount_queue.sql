-- The gauges' counters filled from the queue as it stands (migrations/0037_queue_counts.sql),
-- in the transaction that has just created their triggers: creating a trigger locks the
-- queue against writers until the commit, so this count and the triggers' changes meet
-- exactly. Run with every change of the definitions, so counters that were ever wrong
-- (a hand-made change with triggers disabled) are made right by the next upgrade.
DELETE FROM webhookd.queue_counts;
DELETE FROM webhookd.queue_counts_by_minute;
INSERT INTO webhookd.queue_counts_by_minute (created_minute, pending, in_flight)
  SELECT date_trunc('minute', q.created_at), count(*) FILTER (WHERE q.claim_token IS NULL),
         count(*) FILTER (WHERE q.claim_token IS NOT NULL)
    FROM webhookd.delivery_queue q GROUP BY 1;
