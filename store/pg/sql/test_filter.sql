-- Whether filter $1 delivers payload $2, as the fan-out decides (payload_jsonb included);
-- 22023 for a filter that may not be one.
SELECT filter_test($1, payload_jsonb($2))
