-- Without WEBHOOKD_ENCRYPTION_KEY, webhookd now stores a client's header value or OAuth
-- client secret that starts like its own sealed ("wse1:") or escaped ("wsp1:") forms as
-- "wsp1:" followed by the value (base/secret_box.h), and reads "wsp1:" back as "the rest
-- is plaintext". Before, it never wrote "wsp1:" itself, so every stored value starting so
-- is a client's own: escaped here, it keeps reading as the client gave it.
--
-- A stored "wse1:" value cannot be told apart this way: webhookd wrote those when a key
-- was set, and they stay sealed (docs/security.md says what to do with one no key opens).
UPDATE webhookd.destinations
   SET headers = (SELECT jsonb_object_agg(name, CASE WHEN value LIKE 'wsp1:%'
                                                     THEN 'wsp1:' || value ELSE value END)
                    FROM jsonb_each_text(headers) AS h(name, value))
 WHERE EXISTS (SELECT FROM jsonb_each_text(headers) AS h(name, value)
                WHERE value LIKE 'wsp1:%');

UPDATE webhookd.destinations SET auth_client_secret = 'wsp1:' || auth_client_secret
 WHERE auth_client_secret LIKE 'wsp1:%';
