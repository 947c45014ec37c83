-- The erasures still to carry out, oldest first; through erasures_running, so it reads
-- nothing when there are none.
SELECT id FROM erasures WHERE status = 'running' ORDER BY id
