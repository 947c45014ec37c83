-- scripts/bench: the events, how many of them did not make exactly :n deliveries, and the
-- fewest and most deliveries of an event ("events|wrong|min|max").
-- Variables: n.
SELECT count(*), count(*) FILTER (WHERE made <> :n), coalesce(min(made), 0), coalesce(max(made), 0)
  FROM (SELECT e.id, count(d.id) AS made
          FROM events e LEFT JOIN deliveries d ON d.event_id = e.id
         GROUP BY e.id) x;
