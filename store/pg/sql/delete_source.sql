-- Soft-deletes a live source: its events still name it. Its secrets are erased, as
-- nothing verifies with them any more. $2: the caller's tenant (NULL: any).
UPDATE sources
   SET deleted_at = now(), updated_at = now(), secret = '', previous_secret = NULL,
       previous_valid_until = NULL
 WHERE id = $1 AND deleted_at IS NULL AND ($2::text IS NULL OR tenant_id = $2)
RETURNING id
