-- $2 signs on, beside the new secret, until $3 microseconds from now.
INSERT INTO destination_secrets (destination_id, secret, expires_at)
VALUES ($1, $2, now() + $3::bigint * interval '1 microsecond')
RETURNING expires_at
