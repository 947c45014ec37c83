-- Every webhookd connection: its own schema first, UTC timestamps, and a bound on how long
-- a transaction may sit idle (a paused process must not hold locks for long).
SET search_path = webhookd;
SET TIME ZONE 'UTC';
SET idle_in_transaction_session_timeout = '10s';
SET application_name = 'webhookd'
