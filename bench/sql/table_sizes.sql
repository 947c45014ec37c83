-- scripts/bench --soak: events kept, and the size of the tables retention keeps small.
SELECT (SELECT count(*) FROM events),
       round((pg_total_relation_size('events') + pg_total_relation_size('deliveries')
              + pg_total_relation_size('attempts') + pg_total_relation_size('dead_letters'))
             / 1048576.0, 1);
