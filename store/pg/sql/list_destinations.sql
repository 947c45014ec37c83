-- $3: the tenant_id filter, $4: the caller's tenant (each NULL: any).
SELECT id, url, description, to_json(event_types)::text, secret, headers::text, enabled,
       max_in_flight, created_at, updated_at, tenant_id, rate_limit, disabled_reason,
       -- from next_probe_at on, an open circuit lets its probe through: half-open
       CASE WHEN circuit = 'open' AND next_probe_at <= now() THEN 'half_open' ELSE circuit END,
       consecutive_failures, failing_since, next_probe_at, effective_max_in_flight,
       ordering, on_dead_letter, filter, tls_client_certificate, tls_client_key,
       tls_ca_certificate, auth_token_url, auth_client_id, auth_client_secret, auth_scope,
       broker::text, broker_username, broker_password, fallback
  FROM destinations
 WHERE deleted_at IS NULL AND ($1::bigint IS NULL OR id < $1)
   AND ($3::text IS NULL OR tenant_id = $3) AND ($4::text IS NULL OR tenant_id = $4)
 ORDER BY id DESC LIMIT $2
