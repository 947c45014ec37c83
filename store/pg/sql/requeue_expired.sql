UPDATE deliveries SET status = 'pending', lease_until = NULL, claim_token = NULL,
       updated_at = now()
 WHERE status = 'in_flight' AND lease_until < now()
