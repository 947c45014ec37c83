-- A destination created disabled was disabled by hand. $12: its filter, already checked
-- by filter_problem (store/pg/schema/filter_problem.sql); NULL: none. $13-$15: the TLS
-- settings (docs/egress.md), the key sealed by the caller; $16-$19: OAuth (token URL,
-- client id, the client secret sealed, scope).
INSERT INTO destinations (url, description, event_types, secret, headers, enabled, max_in_flight,
                          tenant_id, rate_limit, disabled_reason, ordering, on_dead_letter, filter,
                          tls_client_certificate, tls_client_key, tls_ca_certificate,
                          auth_token_url, auth_client_id, auth_client_secret, auth_scope)
VALUES ($1, $2, $3::text[], $4, $5::jsonb, $6, $7::int, $8, $9::int,
        CASE WHEN $6::boolean THEN NULL ELSE 'manual' END, $10, $11, $12, $13, $14, $15, $16,
        $17, $18, $19)
RETURNING id, url, description, to_json(event_types)::text, secret, headers::text, enabled,
          max_in_flight, created_at, updated_at, tenant_id, rate_limit, disabled_reason,
          -- from next_probe_at on, an open circuit lets its probe through: half-open
          CASE WHEN circuit = 'open' AND next_probe_at <= now() THEN 'half_open' ELSE circuit END,
          consecutive_failures, failing_since, next_probe_at, effective_max_in_flight,
       ordering, on_dead_letter, filter, tls_client_certificate, tls_client_key,
       tls_ca_certificate, auth_token_url, auth_client_id, auth_client_secret, auth_scope
