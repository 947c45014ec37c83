SELECT name, description, schema::text, examples::text, deprecated, builtin, created_at, updated_at
  FROM event_types WHERE name = $1
