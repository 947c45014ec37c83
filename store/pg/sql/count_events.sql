-- Events of one transaction: the ids it drew and the now() it stored (see
-- CommittedAfterDoubt in exec.h for why the ids alone are not enough).
SELECT count(*) FROM events WHERE id = ANY($1::bigint[]) AND created_at = $2::timestamptz
