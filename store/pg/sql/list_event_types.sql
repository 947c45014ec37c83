-- A page in name order: $1 the last name of the previous page (NULL: from the start), $2
-- how many.
SELECT name, description, schema::text, examples::text, deprecated, builtin, created_at, updated_at
  FROM event_types
 WHERE $1::text IS NULL OR name > $1
 ORDER BY name LIMIT $2
