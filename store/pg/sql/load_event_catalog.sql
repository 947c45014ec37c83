-- Every type with a schema, and the generation they belong to, read in one snapshot. A
-- type without a schema is a row too: under strict mode its presence is what counts.
SELECT c.generation, t.name, t.schema::text
  FROM event_catalog c LEFT JOIN event_types t ON true
 ORDER BY t.name
