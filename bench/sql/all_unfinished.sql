-- scripts/bench: deliveries not yet succeeded, and attempts recorded, over all destinations.
SELECT (SELECT count(*) FROM deliveries WHERE status <> 'succeeded') || ' '
       || (SELECT count(*) FROM attempts);
