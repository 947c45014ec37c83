-- The earliest due time among enabled destinations, from the claim's hints
-- (store/pg/schema/hint_pending_deliveries.sql, claim_due.sql): each is at or before its destination's earliest pending delivery,
-- so this may be early (the worker then claims nothing and the claim moves the hint),
-- never late. Idle destinations have no hint, and a disabled one's is passed over.
SELECT h.due_at FROM due_destinations h JOIN destinations t ON t.id = h.destination_id
 WHERE t.enabled ORDER BY h.due_at LIMIT 1
