-- The fan-out's type rule, made cheap per destination. event_type_matches (0004) runs a
-- sub-select for every destination it is asked about, which PostgreSQL cannot inline: a
-- tenant with 20 destinations paid 20 of those per event. The same rule as keys: the
-- patterns that match a type are the type itself and "p.*" for every "p." it starts with.
-- A statement computes the keys once per event, and each destination costs one array
-- overlap (&&).
CREATE FUNCTION webhookd.event_type_keys(type text) RETURNS text[]
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN ARRAY(SELECT type
               UNION ALL
               SELECT left(type, i) || '*' FROM generate_series(1, length(type)) i
                WHERE substr(type, i, 1) = '.');

-- The rule itself, restated on the keys (a pgtest holds it to the 0004 definition).
CREATE OR REPLACE FUNCTION webhookd.event_type_matches(patterns text[], type text)
  RETURNS boolean
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN cardinality(patterns) = 0 OR patterns && webhookd.event_type_keys(type);
