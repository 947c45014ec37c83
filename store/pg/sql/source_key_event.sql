-- The event source $1's duplicate key $2 names, and whether that event is still kept.
SELECT k.event_id, EXISTS (SELECT 1 FROM events e WHERE e.id = k.event_id)
  FROM source_keys k
 WHERE k.source_id = $1 AND k.dedupe_key = $2
