-- Hands claims back unstarted. A row is found by its id and claim token alone: a token is
-- set exactly while its row is in flight (a constraint of migrations/0034_baseline.sql).
UPDATE deliveries d SET status = 'pending', next_attempt_at = now(), lease_until = NULL,
       claim_token = NULL, updated_at = now()
  FROM unnest($1::bigint[], $2::bigint[]) AS u(id, token)
 WHERE d.id = u.id AND d.claim_token = u.token
