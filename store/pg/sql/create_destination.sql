-- A destination created disabled was disabled by hand. The parameters, bound by name
-- (NamedParams):
-- @param $1 url
-- @param $2 description
-- @param $3 event_types
-- @param $4 secret sealed
-- @param $5 headers their values sealed
-- @param $6 enabled
-- @param $7 max_in_flight
-- @param $8 tenant_id
-- @param $9 rate_limit
-- @param $10 ordering
-- @param $11 on_dead_letter
-- @param $12 filter already checked by filter_problem (store/pg/schema/filter_problem.sql);
--            NULL: none
-- @param $13 tls_client_certificate the TLS settings (docs/egress.md)
-- @param $14 tls_client_key sealed
-- @param $15 tls_ca_certificate
-- @param $16 auth_token_url OAuth
-- @param $17 auth_client_id
-- @param $18 auth_client_secret sealed
-- @param $19 auth_scope
-- @param $20 broker the broker settings that are not credentials, a JSON object (NULL: an
--            HTTP destination)
-- @param $21 broker_username sealed
-- @param $22 broker_password sealed
-- @param $23 fallback 'feed', or NULL: dead letters (docs/feeds.md)
INSERT INTO destinations (url, description, event_types, secret, headers, enabled, max_in_flight,
                          tenant_id, rate_limit, disabled_reason, ordering, on_dead_letter, filter,
                          tls_client_certificate, tls_client_key, tls_ca_certificate,
                          auth_token_url, auth_client_id, auth_client_secret, auth_scope,
                          broker, broker_username, broker_password, fallback)
VALUES ($1, $2, $3::text[], $4, $5::jsonb, $6, $7::int, $8, $9::int,
        CASE WHEN $6::boolean THEN NULL ELSE 'manual' END, $10, $11, $12, $13, $14, $15, $16,
        $17, $18, $19, $20::jsonb, $21, $22, $23)
RETURNING id, url, description, to_json(event_types)::text, secret, headers::text, enabled,
          max_in_flight, created_at, updated_at, tenant_id, rate_limit, disabled_reason,
          -- from next_probe_at on, an open circuit lets its probe through: half-open
          CASE WHEN circuit = 'open' AND next_probe_at <= now() THEN 'half_open' ELSE circuit END,
          consecutive_failures, failing_since, next_probe_at, effective_max_in_flight,
       ordering, on_dead_letter, filter, tls_client_certificate, tls_client_key,
       tls_ca_certificate, auth_token_url, auth_client_id, auth_client_secret, auth_scope,
       broker::text, broker_username, broker_password, fallback
