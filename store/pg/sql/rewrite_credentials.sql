-- The same credentials of a destination, sealed anew; updated_at stays (nothing a user
-- set changed). The parameters, bound by name (NamedParams):
-- @param $1 id
-- @param $2 secret
-- @param $3 headers their values sealed
-- @param $4 tls_client_key
-- @param $5 auth_client_secret
-- @param $6 broker_username
-- @param $7 broker_password
UPDATE destinations SET secret = $2, headers = $3::jsonb, tls_client_key = $4,
       auth_client_secret = $5, broker_username = $6, broker_password = $7
 WHERE id = $1
