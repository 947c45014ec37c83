SELECT id, type, payload, created_at FROM events
 WHERE ($1::bigint IS NULL OR id < $1) AND ($2::text IS NULL OR type = $2)
   AND ($3::timestamptz IS NULL OR created_at >= $3)
   AND ($4::timestamptz IS NULL OR created_at < $4)
 ORDER BY id DESC LIMIT $5
