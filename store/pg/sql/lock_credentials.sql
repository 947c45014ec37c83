-- Up to $2 destinations after id $1 (deleted ones too: their rows still hold secrets),
-- locked against a concurrent change, with every credential they store.
SELECT d.id, d.secret, d.headers::text,
       to_json(ARRAY(SELECT s.secret FROM destination_secrets s
                      WHERE s.destination_id = d.id))::text,
       d.tls_client_key, d.auth_client_secret, d.broker_username, d.broker_password
  FROM destinations d
 WHERE d.id > $1
 ORDER BY d.id
 LIMIT $2
   FOR UPDATE OF d
