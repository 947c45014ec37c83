-- Per enabled destination, through the same index the claim walks (a disabled
-- destination's backlog is never scanned).
SELECT min(n.at) FROM destinations t CROSS JOIN LATERAL (
  SELECT d.next_attempt_at AS at FROM deliveries d
   WHERE d.destination_id = t.id AND d.status = 'pending'
   ORDER BY d.destination_id, d.next_attempt_at LIMIT 1) n
 WHERE t.enabled
