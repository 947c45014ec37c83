-- The parameters, bound by name (NamedParams). A *_given flag says whether the patch has
-- that field at all, where NULL is a value the field can be set to.
-- @param $1 id
-- @param $2 url (NULL: unchanged)
-- @param $3 description (NULL: unchanged)
-- @param $4 event_types_given
-- @param $5 event_types
-- @param $6 secret sealed (NULL: unchanged)
-- @param $7 headers replacing the custom headers; one given the value "set" (how responses
--           show a value) keeps the value it has, if it has one
-- @param $8 enabled false is a manual disabling; true clears the reason and starts the
--           destination's health afresh: circuit closed, counts zero, the full cap
-- @param $9 max_in_flight_given
-- @param $10 max_in_flight
-- @param $11 scope_tenant_id the caller's tenant (NULL: any)
-- @param $12 tenant_id_given a tenant_id is never changed, so a patch naming another
--            matches no row (and the caller tells it from an unknown id)
-- @param $13 tenant_id
-- @param $14 rate_limit_given
-- @param $15 rate_limit
-- @param $16 ordering (NULL: unchanged)
-- @param $17 on_dead_letter (NULL: unchanged)
-- @param $18 filter_given
-- @param $19 filter already checked by filter_problem
-- @param $20 tls_given
-- @param $21 tls_client_certificate
-- @param $22 tls_client_key sealed, or "set" to keep the one stored (the caller checked
--            that it matches the certificate)
-- @param $23 tls_ca_certificate
-- @param $24 auth_given
-- @param $25 auth_token_url
-- @param $26 auth_client_id
-- @param $27 auth_client_secret sealed, or "set" to keep the one stored
-- @param $28 auth_scope
-- @param $29 broker_given
-- @param $30 broker the settings that are not credentials, a JSON object
-- @param $31 broker_username sealed, or "set" to keep the one stored
-- @param $32 broker_password sealed, or "set" to keep the one stored
-- @param $33 fallback_given
-- @param $34 fallback 'feed', or NULL: dead letters
UPDATE destinations
   SET url = coalesce($2, url), description = coalesce($3, description),
       event_types = CASE WHEN $4::boolean THEN $5::text[] ELSE event_types END,
       secret = coalesce($6, secret),
       headers = CASE WHEN $7::jsonb IS NULL THEN headers ELSE coalesce(
         (SELECT jsonb_object_agg(name, CASE WHEN value = '"set"' AND headers ? name
                                             THEN headers -> name ELSE value END)
            FROM jsonb_each($7::jsonb) AS given(name, value)), '{}') END,
       enabled = coalesce($8::boolean, enabled),
       max_in_flight = CASE WHEN $9::boolean THEN $10::int ELSE max_in_flight END,
       rate_limit = CASE WHEN $14::boolean THEN $15::int ELSE rate_limit END,
       ordering = coalesce($16, ordering), on_dead_letter = coalesce($17, on_dead_letter),
       filter = CASE WHEN $18::boolean THEN $19::text ELSE filter END,
       tls_client_certificate = CASE WHEN $20::boolean THEN $21::text ELSE tls_client_certificate END,
       tls_client_key = CASE WHEN NOT $20::boolean THEN tls_client_key
                             WHEN $22::text = 'set' THEN tls_client_key ELSE $22::text END,
       tls_ca_certificate = CASE WHEN $20::boolean THEN $23::text ELSE tls_ca_certificate END,
       auth_token_url = CASE WHEN $24::boolean THEN $25::text ELSE auth_token_url END,
       auth_client_id = CASE WHEN $24::boolean THEN $26::text ELSE auth_client_id END,
       auth_client_secret = CASE WHEN NOT $24::boolean THEN auth_client_secret
                                 WHEN $27::text = 'set' THEN auth_client_secret ELSE $27::text END,
       auth_scope = CASE WHEN $24::boolean THEN $28::text ELSE auth_scope END,
       broker = CASE WHEN $29::boolean THEN $30::jsonb ELSE broker END,
       broker_username = CASE WHEN NOT $29::boolean THEN broker_username
                              WHEN $31::text = 'set' THEN broker_username ELSE $31::text END,
       broker_password = CASE WHEN NOT $29::boolean THEN broker_password
                              WHEN $32::text = 'set' THEN broker_password ELSE $32::text END,
       fallback = CASE WHEN $33::boolean THEN $34::text ELSE fallback END,
       disabled_reason = CASE $8::boolean WHEN false THEN 'manual' WHEN true THEN NULL
                         ELSE disabled_reason END,
       circuit = CASE WHEN $8::boolean THEN 'closed' ELSE circuit END,
       consecutive_failures = CASE WHEN $8::boolean THEN 0 ELSE consecutive_failures END,
       failing_since = CASE WHEN $8::boolean THEN NULL ELSE failing_since END,
       next_probe_at = CASE WHEN $8::boolean THEN NULL ELSE next_probe_at END,
       cooldown_us = CASE WHEN $8::boolean THEN NULL ELSE cooldown_us END,
       effective_max_in_flight = CASE WHEN $8::boolean THEN NULL ELSE effective_max_in_flight END,
       success_run = CASE WHEN $8::boolean THEN 0 ELSE success_run END,
       ramping = CASE WHEN $8::boolean THEN false ELSE ramping END,
       updated_at = now()
 WHERE id = $1 AND deleted_at IS NULL AND ($11::text IS NULL OR tenant_id = $11)
   AND (NOT $12::boolean OR tenant_id IS NOT DISTINCT FROM $13::text)
RETURNING id, url, description, to_json(event_types)::text, secret, headers::text, enabled,
          max_in_flight, created_at, updated_at, tenant_id, rate_limit, disabled_reason,
          -- from next_probe_at on, an open circuit lets its probe through: half-open
          CASE WHEN circuit = 'open' AND next_probe_at <= now() THEN 'half_open' ELSE circuit END,
          consecutive_failures, failing_since, next_probe_at, effective_max_in_flight,
       ordering, on_dead_letter, filter, tls_client_certificate, tls_client_key,
       tls_ca_certificate, auth_token_url, auth_client_id, auth_client_secret, auth_scope,
       broker::text, broker_username, broker_password, fallback
