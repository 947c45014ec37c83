-- The rest of an erasure's batch (run_erasure.sql, in the same transaction): every stored
-- response body of events $1's attempts is emptied, and every error text of their
-- attempts, deliveries and dead letters becomes 'erased' (a receiver's answer or a
-- broker's error may quote the payload; NULL, no error, stays NULL). A statement of its
-- own, so that its snapshot is taken after run_erasure.sql took the events' queue rows:
-- an outcome written meanwhile either committed before (run_erasure.sql waited for it on
-- the queue row, and this statement sees its attempt) or finds no queue row and writes
-- nothing. Each row is found through deliveries_event, then its delivery's key.
WITH ds AS (
  SELECT id FROM deliveries WHERE event_id = ANY($1::bigint[])),
texts AS (
  UPDATE deliveries d SET last_error = 'erased'
    FROM ds WHERE d.id = ds.id AND d.last_error <> 'erased'),
attempt_texts AS (
  UPDATE attempts a
     SET response_body = '', error = CASE WHEN a.error IS NOT NULL THEN 'erased' END
    FROM ds WHERE a.delivery_id = ds.id AND (a.response_body <> '' OR a.error <> 'erased')),
dead_letter_texts AS (
  UPDATE dead_letters x SET last_error = 'erased'
    FROM ds WHERE x.delivery_id = ds.id AND x.last_error <> 'erased')
SELECT count(*) FROM ds
