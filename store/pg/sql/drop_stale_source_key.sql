-- Source $1's duplicate key $2, when it still names event $3 and that event is gone (its
-- retention ended before the key's removal): the key names nothing any more.
DELETE FROM source_keys k
 WHERE k.source_id = $1 AND k.dedupe_key = $2 AND k.event_id = $3
   AND NOT EXISTS (SELECT 1 FROM events e WHERE e.id = k.event_id)
