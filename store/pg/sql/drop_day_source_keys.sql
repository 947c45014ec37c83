-- The duplicate keys of the events of a dropped day of the history, ids [$1, $2), once
-- the day is gone; an event kept past its day is in the kept partition and keeps its key.
DELETE FROM source_keys k
 WHERE k.event_id >= $1 AND k.event_id < $2
   AND NOT EXISTS (SELECT 1 FROM events e WHERE e.id = k.event_id)
