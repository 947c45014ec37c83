-- Whatever makes a delivery pending (queued at ingest or by a replay, a retry, a released
-- or expired claim) adds a hint for its destination in the same statement, so the claim
-- visits only destinations with something due. A delivery in its destination's feed
-- instead of dead letters (feed_at set, migrations/0043_feed_fallback.sql) is no claim's:
-- no hint.
CREATE OR REPLACE FUNCTION webhookd.hint_pending_deliveries()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'webhookd'
AS $function$
BEGIN
  INSERT INTO due_destinations (destination_id, due_at)
    SELECT n.destination_id, min(n.next_attempt_at) FROM new_rows n
     WHERE n.claim_token IS NULL AND n.feed_at IS NULL GROUP BY n.destination_id;
  RETURN NULL;
END
$function$;

CREATE OR REPLACE TRIGGER delivery_queue_hinted_insert AFTER INSERT ON webhookd.delivery_queue REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION hint_pending_deliveries();

CREATE OR REPLACE TRIGGER delivery_queue_hinted_update AFTER UPDATE ON webhookd.delivery_queue REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION hint_pending_deliveries();
