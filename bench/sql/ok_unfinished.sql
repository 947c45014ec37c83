-- scripts/bench: deliveries to the sink's /ok/ destinations not yet succeeded.
SELECT count(*) FROM deliveries d JOIN destinations t ON t.id = d.destination_id
 WHERE d.status <> 'succeeded' AND t.url LIKE '%/ok/%';
