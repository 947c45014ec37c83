-- scripts/bench: :n due deliveries to one destination at the sink's /ok/1 (cap 64) with
-- ordering :'ordering', their events spread over :keys ordering keys round robin (so
-- each key's events are in id order, interleaved with the other keys').
-- Variables: n, keys, ordering, sink (host:port), secret.
INSERT INTO destinations (url, secret, max_in_flight, ordering)
  VALUES ('http://' || :'sink' || '/ok/1', :'secret', 64, :'ordering');
INSERT INTO events (type, payload, ordering_key)
  SELECT 'order.created', '{"id":' || g || ',"total":"9.99","currency":"EUR"}',
         'order-' || (g % :keys)
    FROM generate_series(1, :n) g;
-- One statement: the fan-out's trigger marks them fifo when the destination is.
INSERT INTO deliveries (event_id, destination_id, ordering_key)
  SELECT e.id, (SELECT max(id) FROM destinations), e.ordering_key FROM events e;
VACUUM ANALYZE;
CHECKPOINT;
