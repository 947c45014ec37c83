-- Hands claims back unstarted. A row is found by its id and claim token alone: a queue
-- row carries a token exactly while it is in flight (migrations/0035_delivery_queue.sql).
UPDATE delivery_queue q SET next_attempt_at = now(), lease_until = NULL, claim_token = NULL
  FROM unnest($1::bigint[], $2::bigint[]) AS u(id, token)
 WHERE q.id = u.id AND q.claim_token = u.token
