-- Why a replay or a dismissal changed nothing; no row when the dead letter is unknown or,
-- $2 being the caller's tenant (NULL: any), another tenant's.
SELECT x.replayed_at IS NOT NULL, t.deleted_at IS NOT NULL, x.dismissed_at IS NOT NULL,
       EXISTS (SELECT 1 FROM events v WHERE v.id = x.event_id AND v.erased_at IS NOT NULL)
  FROM dead_letters x JOIN destinations t ON t.id = x.destination_id
 WHERE x.id = $1 AND ($2::text IS NULL OR x.tenant_id = $2)
