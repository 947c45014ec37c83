-- A whole group of ingests in one statement: ids drawn first so each row's deliveries
-- can be matched back to its request by `ord`. A row with a key hash ($3) is ingested only
-- if that API key is live; otherwise its `ord` comes back with a NULL id.
WITH input AS (
  SELECT t.type, t.payload, t.key_hash, t.ord
    FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS t(type, payload, key_hash, ord)),
ids AS (
  SELECT ord, type, payload, nextval(pg_get_serial_sequence('events', 'id')) AS id FROM input x
   WHERE x.key_hash IS NULL
      OR EXISTS (SELECT 1 FROM api_keys k WHERE k.key_hash = x.key_hash AND k.revoked_at IS NULL)),
ev AS (
  INSERT INTO events (id, type, payload) OVERRIDING SYSTEM VALUE
  SELECT id, type, payload FROM ids ORDER BY ord RETURNING id),
dl AS (
  INSERT INTO deliveries (event_id, destination_id, next_attempt_at)
  SELECT i.id, t.id, now() FROM ids i JOIN destinations t
      ON t.enabled AND t.deleted_at IS NULL
     AND event_type_matches(t.event_types, i.type)
   ORDER BY i.id, t.id
  RETURNING id, event_id, destination_id)
SELECT x.ord, i.id, now(), d.id, d.destination_id
  FROM input x LEFT JOIN ids i ON i.ord = x.ord LEFT JOIN dl d ON d.event_id = i.id
 ORDER BY x.ord, d.id
