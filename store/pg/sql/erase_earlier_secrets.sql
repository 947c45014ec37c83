-- A rotation with no grace period ends every earlier secret at once.
DELETE FROM destination_secrets WHERE destination_id = $1
