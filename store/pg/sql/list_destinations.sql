SELECT id, url, description, to_json(event_types)::text, secret, headers::text, enabled,
       max_in_flight, created_at, updated_at
  FROM destinations
 WHERE deleted_at IS NULL AND ($1::bigint IS NULL OR id < $1)
 ORDER BY id DESC LIMIT $2
