-- The recoveries still to carry out, oldest first; through recoveries_running, so it
-- reads nothing when there are none.
SELECT id FROM recoveries WHERE status = 'running' ORDER BY id
