-- The API pool's bound on each statement (WEBHOOKD_STATEMENT_TIMEOUT), for the session;
-- $1 in milliseconds.
SELECT set_config('statement_timeout', $1, false)
