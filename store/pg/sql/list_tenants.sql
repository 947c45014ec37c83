-- Up to $2 tenants in tenant_id order after $1 (NULL: from the first), with their counts.
-- A tenant exists while a live destination or an event carries its id (deliveries and
-- dead letters carry their event's). Each table's distinct ids are walked through its
-- tenant index, one probe per id (a loose index scan, stopped by the LIMIT), so a page
-- costs about its size, not the size of the tables.
WITH RECURSIVE
dst(t) AS (
  SELECT min(tenant_id) FROM destinations
   WHERE deleted_at IS NULL AND tenant_id > coalesce($1::text, '')
  UNION ALL
  SELECT (SELECT min(x.tenant_id) FROM destinations x
           WHERE x.deleted_at IS NULL AND x.tenant_id > dst.t)
    FROM dst WHERE dst.t IS NOT NULL),
evt(t) AS (
  SELECT min(tenant_id) FROM events WHERE tenant_id > coalesce($1::text, '')
  UNION ALL
  SELECT (SELECT min(x.tenant_id) FROM events x WHERE x.tenant_id > evt.t)
    FROM evt WHERE evt.t IS NOT NULL),
page AS (
  SELECT t FROM ((SELECT t FROM dst WHERE t IS NOT NULL LIMIT $2)
                 UNION
                 (SELECT t FROM evt WHERE t IS NOT NULL LIMIT $2)) u
   ORDER BY t LIMIT $2)
SELECT p.t,
       (SELECT count(*) FROM destinations x WHERE x.tenant_id = p.t AND x.deleted_at IS NULL),
       -- Through the queue's due index: a tenant's finished deliveries are not read.
       (SELECT count(*) FROM destinations x JOIN delivery_queue q ON q.destination_id = x.id
         WHERE x.tenant_id = p.t AND x.deleted_at IS NULL AND q.claim_token IS NULL),
       (SELECT count(*) FROM dead_letters x WHERE x.tenant_id = p.t AND x.replayed_at IS NULL)
  FROM page p ORDER BY p.t
