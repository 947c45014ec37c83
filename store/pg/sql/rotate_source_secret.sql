-- $2 (sealed) becomes the secret of live source $1; the one it replaces verifies for $3
-- microseconds more (0: not at all, and no earlier one does). $4: the caller's tenant
-- (NULL: any). Returns when the replaced secret stops verifying.
UPDATE sources
   SET previous_secret = CASE WHEN $3::bigint > 0 THEN secret END,
       previous_valid_until = CASE WHEN $3::bigint > 0
                                   THEN now() + $3::bigint * interval '1 microsecond' END,
       secret = $2, updated_at = now()
 WHERE id = $1 AND deleted_at IS NULL AND ($4::text IS NULL OR tenant_id = $4)
RETURNING coalesce(previous_valid_until, now())
