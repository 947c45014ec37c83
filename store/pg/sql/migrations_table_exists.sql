SELECT to_regclass('webhookd.schema_migrations') IS NOT NULL
