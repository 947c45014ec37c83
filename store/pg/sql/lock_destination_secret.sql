-- The current secret of a live destination, locked for the rotation's transaction.
SELECT secret FROM destinations WHERE id = $1 AND deleted_at IS NULL FOR UPDATE
