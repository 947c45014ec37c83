-- A recovery of destination $1's dead letters dead-lettered in [$2, $3), recorded as
-- running; $3 is at most now (NULL: now), so it never takes the dead letters of the
-- deliveries it replays itself. $4: the caller's tenant (NULL: any); a destination of
-- another tenant is not found, as an unknown one. $5: how many of the destination's
-- recoveries may run at once. Always one row: whether the destination was found, whether
-- the window is not empty, whether one more may run, and the recovery when all three.
WITH d AS (
  SELECT id, tenant_id FROM destinations
   WHERE id = $1 AND deleted_at IS NULL AND ($4::text IS NULL OR tenant_id = $4)),
w AS (
  SELECT $2::timestamptz AS since, least(coalesce($3::timestamptz, now()), now()) AS until),
room AS (
  SELECT count(*) < $5 AS ok FROM (SELECT 1 FROM recoveries
                                     WHERE destination_id = $1 AND status = 'running'
                                     LIMIT $5) r),
r AS (
  INSERT INTO recoveries (destination_id, tenant_id, since, until)
  SELECT d.id, d.tenant_id, w.since, w.until FROM d, w, room
   WHERE w.since < w.until AND room.ok
  RETURNING id, destination_id, tenant_id, status, replayed, since, until, created_at,
            finished_at)
SELECT EXISTS (SELECT 1 FROM d), w.since < w.until, room.ok, r.id, r.destination_id,
       r.tenant_id, r.status, r.replayed, r.since, r.until, r.created_at, r.finished_at
  FROM w CROSS JOIN room LEFT JOIN r ON true
