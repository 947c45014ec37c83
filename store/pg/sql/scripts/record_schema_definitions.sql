INSERT INTO schema_definitions (hash) VALUES ($1)
