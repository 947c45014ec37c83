-- The rule itself, restated on the keys (event_type_rule_pgtest holds it to the rule's first definition).
CREATE OR REPLACE FUNCTION webhookd.event_type_matches(patterns text[], type text)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
RETURN ((cardinality(patterns) = 0) OR (patterns && event_type_keys(type)));
