-- Source $1's duplicate key $2 for event $3, unless it names an event already: then no
-- row. A concurrent request with the same key waits here for the first one's transaction,
-- then finds its key.
INSERT INTO source_keys (source_id, dedupe_key, event_id) VALUES ($1, $2, $3)
ON CONFLICT (source_id, dedupe_key) DO NOTHING
RETURNING event_id
