-- The same credentials of destination $1, sealed anew; updated_at stays (nothing a user
-- set changed).
UPDATE destinations SET secret = $2, headers = $3::jsonb, tls_client_key = $4,
       auth_client_secret = $5, broker_username = $6, broker_password = $7
 WHERE id = $1
