-- scripts/bench: what the open-circuit and the rate-limited destinations' deliveries got:
-- attempts by outcome per destination path.
SELECT x.path || ' ' || x.outcome || '=' || x.n
  FROM (SELECT substring(t.url FROM '/[a-z]+$') AS path, a.outcome, count(*) AS n
          FROM attempts a JOIN deliveries d ON d.id = a.delivery_id
          JOIN destinations t ON t.id = d.destination_id
         WHERE t.url NOT LIKE '%/ok/%'
         GROUP BY 1, 2) x
 ORDER BY 1;
