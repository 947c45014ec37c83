SELECT to_regclass('webhookd.schema_definitions') IS NOT NULL
