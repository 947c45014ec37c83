-- No bound on the statements of this transaction alone: maintenance (the retention purge,
-- re-encryption) that runs on the API pool's connections without being a request.
SELECT set_config('statement_timeout', '0', true)
