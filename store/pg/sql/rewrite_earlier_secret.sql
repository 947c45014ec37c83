-- An earlier secret of destination $1, sealed anew ($2 as stored, $3 the new form).
UPDATE destination_secrets SET secret = $3 WHERE destination_id = $1 AND secret = $2
