UPDATE deliveries SET status = 'cancelled', next_attempt_at = NULL, lease_until = NULL,
       claim_token = NULL, updated_at = now()
 WHERE destination_id = $1 AND status IN ('pending', 'in_flight')
