-- scripts/bench: attempts recorded for the sink's /ok/ destinations.
SELECT count(*) FROM attempts a JOIN deliveries d ON d.id = a.delivery_id
  JOIN destinations t ON t.id = d.destination_id WHERE t.url LIKE '%/ok/%';
