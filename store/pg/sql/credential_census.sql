-- Every stored credential, bucketed by its first 14 characters when it looks sealed
-- ("wse1:<key id>:", base/secret_box.h decides what they mean) and '' otherwise.
SELECT CASE WHEN v LIKE 'wse1:%' THEN left(v, 14) ELSE '' END, count(*)
  FROM (SELECT secret FROM destinations
        UNION ALL SELECT secret FROM destination_secrets
        UNION ALL SELECT h.value FROM destinations, jsonb_each_text(headers) AS h
        UNION ALL SELECT tls_client_key FROM destinations WHERE tls_client_key IS NOT NULL
        UNION ALL SELECT auth_client_secret FROM destinations
                   WHERE auth_client_secret IS NOT NULL
        UNION ALL SELECT broker_username FROM destinations WHERE broker_username IS NOT NULL
        UNION ALL SELECT broker_password FROM destinations
                   WHERE broker_password IS NOT NULL
        UNION ALL SELECT secret FROM sources WHERE deleted_at IS NULL
        UNION ALL SELECT previous_secret FROM sources
                   WHERE previous_secret IS NOT NULL) AS c(v)
 GROUP BY 1
