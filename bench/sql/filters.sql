-- scripts/bench's filters case: tenant "bench" with 100 destinations of order.* each
-- with a filter when :filtered is true, ten of which (every tenth) are true for the
-- payload that bench_load posts (amount 125.5, currency EUR, skus sku_1 and sku_2,
-- customer cus_0042); else the same tenant with 100 unfiltered destinations of other
-- types and ten unfiltered ones of order.*. Either way an event makes ten deliveries,
-- which the script checks after the run.
-- Variables: filtered (true or false), sink (host:port), secret.
INSERT INTO destinations (url, secret, event_types, tenant_id, max_in_flight, filter)
  SELECT 'http://' || :'sink' || '/filter/' || g, :'secret', ARRAY['order.*'], 'bench', 64,
         CASE
           WHEN g = 50 THEN '$.customer like_regex "^cus_[0-9]{4}$"'
           WHEN g % 3 = 0 THEN '$.amount >= ' || CASE WHEN g % 10 = 0 THEN g ELSE 1000 + g END
           WHEN g % 3 = 1 THEN '$.currency == "' || CASE WHEN g % 10 = 0 THEN 'EUR' ELSE 'USD' END
                               || '" && $.amount > ' || g
           ELSE '$.items[*].sku starts with "'
                || CASE WHEN g % 10 = 0 THEN 'sku_' ELSE 'gift_' || g END || '"'
         END
    FROM generate_series(1, 100) g
   WHERE :filtered;
INSERT INTO destinations (url, secret, event_types, tenant_id, max_in_flight)
  SELECT 'http://' || :'sink' || '/plain/' || g, :'secret',
         CASE WHEN g <= 10 THEN ARRAY['order.*'] ELSE ARRAY['invoice.' || g] END, 'bench', 64
    FROM generate_series(1, 110) g
   WHERE NOT :filtered;
-- Each filter as the API would take it (a destination's POST checks filter_problem).
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM destinations WHERE filter IS NOT NULL AND filter_problem(filter) IS NOT NULL) THEN
    RAISE EXCEPTION 'filters.sql: a filter the API would refuse: %',
      (SELECT filter || ': ' || filter_problem(filter) FROM destinations
        WHERE filter IS NOT NULL AND filter_problem(filter) IS NOT NULL LIMIT 1);
  END IF;
END
$$;
VACUUM ANALYZE destinations;
CHECKPOINT;
