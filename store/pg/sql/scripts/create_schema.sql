SET client_min_messages = warning;
CREATE SCHEMA IF NOT EXISTS webhookd;
SET search_path = webhookd
