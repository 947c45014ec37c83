SELECT EXISTS (SELECT 1 FROM schema_definitions WHERE hash = $1)
