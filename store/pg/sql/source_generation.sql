-- The sources' generation (store/pg/schema/bump_source_generation.sql).
SELECT generation FROM source_generation
