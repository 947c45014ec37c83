-- An erasure recorded as running, by the subject's SHA-256 alone. $2: the tenant it
-- erases within (NULL: every tenant).
INSERT INTO erasures (subject_hash, tenant_id) VALUES (sha256(convert_to($1, 'UTF8')), $2)
RETURNING id, status, events, cancelled_deliveries, created_at, finished_at, tenant_id
