SELECT count(*) FROM events WHERE id = ANY($1::bigint[])
