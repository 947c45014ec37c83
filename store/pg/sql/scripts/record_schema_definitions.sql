-- $1: the hash of the schema files just applied. Already there when a database migrated
-- by the releases before the baseline has them applied again (store/pg/migrator.cc).
INSERT INTO schema_definitions (hash) VALUES ($1) ON CONFLICT (hash) DO NOTHING
