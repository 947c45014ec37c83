INSERT INTO destinations (url, description, event_types, secret, headers, enabled, max_in_flight,
                          tenant_id)
VALUES ($1, $2, $3::text[], $4, $5::jsonb, $6, $7::int, $8)
RETURNING id, url, description, to_json(event_types)::text, secret, headers::text, enabled,
          max_in_flight, created_at, updated_at, tenant_id
