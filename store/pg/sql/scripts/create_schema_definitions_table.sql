-- One row per set of store/pg/schema/ files a `webhookd migrate` applied, by the hash of
-- their names and texts: a binary whose hash is missing has definitions the database
-- does not have yet.
CREATE TABLE IF NOT EXISTS schema_definitions (
  hash        text PRIMARY KEY,
  applied_at  timestamptz NOT NULL DEFAULT now()
)
