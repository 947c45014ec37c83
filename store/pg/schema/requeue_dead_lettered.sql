-- The one place a dead-lettered delivery is queued again (a replay of one dead letter,
-- a bulk replay's chunk, a recovery's page: replay_dead_letter.sql,
-- replay_dead_letter_chunk.sql, replay_recovery_page.sql), each after marking its dead
-- letters replayed: the deliveries among `ids` still dead-lettered become pending with
-- their schedule restarted (cycle_attempts = 0; attempt_count goes on, so the attempt log
-- counts on) and are queued as queue_new_deliveries.sql queues a new one: due now, fifo
-- as their destination is now. Returns the ids queued.
CREATE OR REPLACE FUNCTION webhookd.requeue_dead_lettered(ids bigint[])
 RETURNS SETOF bigint
 LANGUAGE sql
 SET search_path TO 'webhookd'
AS $function$
  WITH r AS (
    UPDATE deliveries d
       SET status = 'pending', cycle_attempts = 0, stopped_as = NULL, updated_at = now()
     WHERE d.id = ANY (ids) AND d.status = 'dead_lettered'
    RETURNING d.id, d.destination_id, d.ordering_key, d.created_at)
  INSERT INTO delivery_queue (id, destination_id, next_attempt_at, fifo, ordering_key,
                              created_at)
  SELECT r.id, r.destination_id, now(), t.ordering = 'fifo', r.ordering_key, r.created_at
    FROM r JOIN destinations t ON t.id = r.destination_id
  RETURNING id
$function$;
