-- Whoever writes a dead letter, it carries its delivery's tenant. A trigger rather than a
-- column in each writer's statement: the worker's outcome statement stays as it is, and a
-- dead letter can never disagree with its delivery. Dead letters are rare, so the lookup
-- costs the hot path nothing.
CREATE OR REPLACE FUNCTION webhookd.dead_letter_tenant()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'webhookd'
AS $function$
BEGIN
  SELECT d.tenant_id INTO NEW.tenant_id FROM deliveries d WHERE d.id = NEW.delivery_id;
  RETURN NEW;
END
$function$;

CREATE OR REPLACE TRIGGER dead_letters_tenant BEFORE INSERT ON webhookd.dead_letters FOR EACH ROW EXECUTE FUNCTION dead_letter_tenant();
