UPDATE deliveries d SET status = 'pending', next_attempt_at = now(), lease_until = NULL,
       claim_token = NULL, updated_at = now()
  FROM unnest($1::bigint[], $2::bigint[]) AS u(id, token)
 WHERE d.id = u.id AND d.claim_token = u.token AND d.status = 'in_flight'
