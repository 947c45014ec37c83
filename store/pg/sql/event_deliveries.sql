SELECT * FROM delivery_rows WHERE event_id = $1 ORDER BY id
