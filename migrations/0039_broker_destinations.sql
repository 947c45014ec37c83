-- Broker destinations (docs/brokers.md): a destination whose url names a message broker
-- carries that transport's settings. `broker` holds the settings that are not secrets
-- (exchange, routing_key, subject, stream, max_len, topic) as a JSON object; the username
-- and password are sealed like the signing secret and kept apart, so that a list or a
-- census of credentials reads them as it reads every other sealed column.
ALTER TABLE webhookd.destinations
  ADD COLUMN broker jsonb,
  ADD COLUMN broker_username text,
  ADD COLUMN broker_password text,
  ADD CONSTRAINT destinations_broker_object
    CHECK (broker IS NULL OR jsonb_typeof(broker) = 'object'),
  -- Credentials belong to a broker's settings.
  ADD CONSTRAINT destinations_broker_credentials
    CHECK (broker IS NOT NULL OR (broker_username IS NULL AND broker_password IS NULL));
