INSERT INTO destinations (url, description, event_types, secret, headers, enabled, max_in_flight)
VALUES ($1, $2, $3::text[], $4, $5::jsonb, $6, $7::int)
RETURNING id, url, description, to_json(event_types)::text, secret, headers::text, enabled,
          max_in_flight, created_at, updated_at
