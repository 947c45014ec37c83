-- Both partial indexes together cover exactly the unfinished rows.
SELECT count(*) FILTER (WHERE status = 'pending'),
       count(*) FILTER (WHERE status = 'in_flight'),
       count(*) FILTER (WHERE created_at < now() - interval '24 hours'),
       (SELECT count(*) FROM destinations
         WHERE circuit <> 'closed' AND enabled AND deleted_at IS NULL)
  FROM deliveries WHERE status IN ('pending', 'in_flight')
