-- An erasure recorded as running, by the subject's SHA-256 alone. $2: the tenant it
-- erases within (NULL: every tenant). No row when that tenant (or the whole, for NULL)
-- has $3 erasures running already: each is background work of the key that asked, so a
-- key cannot queue it without bound. Two requests at once can both pass at $3 - 1; the
-- bound is on a flood, not exact.
INSERT INTO erasures (subject_hash, tenant_id)
SELECT sha256(convert_to($1, 'UTF8')), $2
 WHERE (SELECT count(*) FROM (SELECT 1 FROM erasures
                               WHERE status = 'running' AND tenant_id IS NOT DISTINCT FROM $2
                               LIMIT $3) r) < $3
RETURNING id, status, events, cancelled_deliveries, created_at, finished_at, tenant_id
