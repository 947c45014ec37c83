-- scripts/bench: PostgreSQL's own maintenance so far: the redo point of the last
-- checkpoint (a new one moves it), whether the checkpointer is at work now (a spread
-- checkpoint shows only at its end), autovacuum and autoanalyze runs over this database's
-- tables, and autovacuum workers at work now (in any database).
SELECT (SELECT redo_lsn FROM pg_control_checkpoint()) || ' '
       || (SELECT count(*) FROM pg_stat_activity
            WHERE backend_type = 'checkpointer'
              AND wait_event IS DISTINCT FROM 'CheckpointerMain') || ' '
       || (SELECT coalesce(sum(autovacuum_count + autoanalyze_count), 0) FROM pg_stat_all_tables)
       || ' ' || (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker');
