-- No bound on the statements of this session until set_statement_timeout.sql restores
-- the one returned: a day's detaches run outside any transaction and may wait for the
-- transactions begun before them.
SELECT current_setting('statement_timeout'), set_config('statement_timeout', '0', false)
