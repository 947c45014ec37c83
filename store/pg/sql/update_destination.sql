-- $4 and $9 say whether event_types and max_in_flight were given (NULL is a value there).
UPDATE destinations
   SET url = coalesce($2, url), description = coalesce($3, description),
       event_types = CASE WHEN $4::boolean THEN $5::text[] ELSE event_types END,
       secret = coalesce($6, secret), headers = coalesce($7::jsonb, headers),
       enabled = coalesce($8::boolean, enabled),
       max_in_flight = CASE WHEN $9::boolean THEN $10::int ELSE max_in_flight END,
       updated_at = now()
 WHERE id = $1 AND deleted_at IS NULL
RETURNING id, url, description, to_json(event_types)::text, secret, headers::text, enabled,
          max_in_flight, created_at, updated_at
