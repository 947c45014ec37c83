-- $2 description, $4 examples and $6 deprecated: NULL keeps the value; $3 says whether a
-- schema ($4, NULL: none) was given. webhookd's own types are not changed ($1 of a builtin
-- matches no row; the caller tells it from an unknown name).
UPDATE event_types
   SET description = coalesce($2, description),
       schema = CASE WHEN $3::boolean THEN $4::json ELSE schema END,
       examples = coalesce($5::json, examples),
       deprecated = coalesce($6::boolean, deprecated),
       updated_at = now()
 WHERE name = $1 AND NOT builtin
RETURNING name, description, schema::text, examples::text, deprecated, builtin, created_at,
          updated_at
