-- Live destinations' mTLS client certificates, for the expiry gauge: through the partial
-- index destinations_tls (migrations/0034_baseline.sql), so idle destinations cost nothing.
SELECT id, tls_client_certificate FROM destinations
 WHERE tls_client_certificate IS NOT NULL AND deleted_at IS NULL
 ORDER BY id
