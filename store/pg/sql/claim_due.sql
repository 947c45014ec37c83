-- The claim is a function (store/pg/schema/claim_due.sql): the claim lock and the
-- claim take one round trip and no client-side transaction.
-- $1 batch size, $2 lease in microseconds, $3 claim token, $4 default per-destination cap.
SELECT * FROM claim_due($1::int, $2::bigint, $3::bigint, $4::int)
