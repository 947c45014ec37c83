-- A delivery holds a claim token exactly while it is in flight: the claim sets both, and
-- every statement that ends a claim (an outcome, a release, the lease sweep, a
-- cancellation) clears the token with the status. The outcome and release statements
-- rely on it: they find a claimed row by its id and token alone, so that their one plan
-- is a primary-key lookup per record. Asking for status = 'in_flight' as well let that
-- plan read every in-flight row through the partial index deliveries_in_flight, which
-- was cheapest when few were in flight and was kept when 1,024 were (~40 µs a record).
--
-- Rows left by an older version that broke the rule are put right first (a claimless
-- in-flight row goes back to pending, as the lease sweep would send it). The constraint
-- then needs no second pass over the table to validate it: NOT VALID still checks every
-- row written from here on.
UPDATE webhookd.deliveries SET claim_token = NULL
 WHERE claim_token IS NOT NULL AND status <> 'in_flight';
UPDATE webhookd.deliveries SET status = 'pending', next_attempt_at = now(), lease_until = NULL
 WHERE status = 'in_flight' AND claim_token IS NULL;
ALTER TABLE webhookd.deliveries
  ADD CONSTRAINT deliveries_claim_token_while_in_flight
  CHECK ((status = 'in_flight') = (claim_token IS NOT NULL)) NOT VALID;

-- The worker's connections make no hash or merge join (store/pg/sql/scripts/
-- key_plans.sql); the claim was planned with both and keeps them.
ALTER FUNCTION webhookd.claim_due(int, bigint, bigint, int)
  SET enable_hashjoin = on;
ALTER FUNCTION webhookd.claim_due(int, bigint, bigint, int)
  SET enable_mergejoin = on;
