-- Source $1's secrets, sealed anew ($2 the secret, $3 the previous one or NULL).
UPDATE sources SET secret = $2, previous_secret = $3 WHERE id = $1
