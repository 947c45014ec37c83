-- Earlier secrets of a destination still in their grace period.
SELECT count(*) FROM destination_secrets WHERE destination_id = $1 AND expires_at > now()
