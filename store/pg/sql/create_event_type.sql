-- Nothing comes back for a name that exists already.
INSERT INTO event_types (name, description, schema, examples, deprecated)
VALUES ($1, $2, $3::json, $4::json, $5)
ON CONFLICT (name) DO NOTHING
RETURNING name, description, schema::text, examples::text, deprecated, builtin, created_at,
          updated_at
