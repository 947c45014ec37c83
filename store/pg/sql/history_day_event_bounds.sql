-- The range of event ids of day $1 of the history: [from, to).
SELECT coalesce(event_from, -9223372036854775808), event_to FROM history_days WHERE day = $1::date
