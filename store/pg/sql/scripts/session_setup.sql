-- Every webhookd connection: its own schema first, UTC timestamps, and a bound on how long
-- a transaction may sit idle (a paused process must not hold locks for long). No JIT:
-- webhookd's statements are key lookups and short batches, and a generic plan whose
-- estimate passed jit_above_cost was compiled by LLVM once per backend (3 % of
-- PostgreSQL's CPU at ingest, scripts/bench --only costs --profile) for nothing.
SET search_path = webhookd;
SET TIME ZONE 'UTC';
SET idle_in_transaction_session_timeout = '10s';
SET jit = off;
SET application_name = 'webhookd'
