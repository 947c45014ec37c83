-- The lease sweeper: a claim whose worker is gone returns to pending when its lease ends,
-- keeping its due time, so it is claimed again at once.
UPDATE delivery_queue SET lease_until = NULL, claim_token = NULL
 WHERE claim_token IS NOT NULL AND lease_until < now()
