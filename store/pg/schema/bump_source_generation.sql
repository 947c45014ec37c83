-- Every change to the sources bumps their one generation number in the same transaction:
-- a server caches the live sources with the generation it read, and an inbound event is
-- written only if that generation is still the current one, so a request is never
-- accepted with a secret rotated out or for a source deleted meanwhile (docs/inbound.md).
CREATE OR REPLACE FUNCTION webhookd.bump_source_generation()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'webhookd'
AS $function$
BEGIN
  UPDATE source_generation SET generation = generation + 1;
  RETURN NULL;
END
$function$;

CREATE OR REPLACE TRIGGER sources_generation AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON webhookd.sources FOR EACH STATEMENT EXECUTE FUNCTION bump_source_generation();
