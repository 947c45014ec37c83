-- Every change to the catalog bumps its one generation number in the same transaction: a
-- server caches the catalog with the generation it read, and ingest writes an event only
-- if the generation it was checked against is still the current one, so a payload is
-- never accepted against a schema that was replaced meanwhile (docs/catalog.md).
CREATE OR REPLACE FUNCTION webhookd.bump_catalog_generation()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'webhookd'
AS $function$
BEGIN
  UPDATE event_catalog SET generation = generation + 1;
  RETURN NULL;
END
$function$;

CREATE OR REPLACE TRIGGER event_types_generation AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON webhookd.event_types FOR EACH STATEMENT EXECUTE FUNCTION bump_catalog_generation();
