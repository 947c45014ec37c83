-- scripts/bench: the feed destinations' deliveries, succeeded|not succeeded|attempts.
SELECT count(*) FILTER (WHERE d.status = 'succeeded') || '|'
       || count(*) FILTER (WHERE d.status <> 'succeeded') || '|'
       || (SELECT count(*) FROM attempts a JOIN deliveries x ON x.id = a.delivery_id
             JOIN destinations t ON t.id = x.destination_id WHERE t.url = 'feed:')
  FROM deliveries d JOIN destinations t ON t.id = d.destination_id WHERE t.url = 'feed:';
