-- Recovery $1, locked until its page commits, with its destination's unfinished
-- deliveries counted up to $2. No row when it is done or another process holds it: two
-- processes never carry out one recovery at once, and each page starts from the cursor
-- the one before committed.
WITH rec AS (
  SELECT id, destination_id, since, until, after_id FROM recoveries
   WHERE id = $1 AND status = 'running'
     FOR UPDATE SKIP LOCKED)
SELECT rec.destination_id, rec.since, rec.until, rec.after_id,
       (SELECT count(*) FROM (SELECT 1 FROM delivery_queue q
                               WHERE q.destination_id = rec.destination_id LIMIT $2) p)
  FROM rec
