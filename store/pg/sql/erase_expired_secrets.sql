-- Earlier secrets whose grace period ended are erased, never kept. $1: one destination,
-- or NULL for all.
DELETE FROM destination_secrets
 WHERE expires_at <= now() AND ($1::bigint IS NULL OR destination_id = $1)
