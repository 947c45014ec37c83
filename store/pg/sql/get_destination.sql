SELECT id, url, description, to_json(event_types)::text, secret, headers::text, enabled,
       max_in_flight, created_at, updated_at
  FROM destinations WHERE id = $1 AND deleted_at IS NULL
