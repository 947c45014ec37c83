-- The earliest due time among enabled destinations, found as the claim finds its work:
-- a skip through deliveries_pending_by_destination visits only the destinations with a
-- pending delivery (one probe each, whose first entry is its earliest), so idle
-- destinations cost nothing and a disabled destination's backlog is never scanned.
WITH RECURSIVE pending_dst(id) AS (
  (SELECT d.destination_id FROM deliveries d WHERE d.status = 'pending'
    ORDER BY d.destination_id LIMIT 1)
  UNION ALL
  SELECT (SELECT d.destination_id FROM deliveries d
           WHERE d.status = 'pending' AND d.destination_id > p.id
           ORDER BY d.destination_id LIMIT 1)
    FROM pending_dst p WHERE p.id IS NOT NULL)
SELECT min(n.at) FROM pending_dst p JOIN destinations t ON t.id = p.id
 CROSS JOIN LATERAL (
  SELECT d.next_attempt_at AS at FROM deliveries d
   WHERE d.destination_id = t.id AND d.status = 'pending'
   ORDER BY d.destination_id, d.next_attempt_at LIMIT 1) n
 WHERE t.enabled
