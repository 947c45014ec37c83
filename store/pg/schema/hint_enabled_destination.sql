-- A destination enabled again is visited: its backlog was left alone while disabled.
CREATE OR REPLACE FUNCTION webhookd.hint_enabled_destination()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'webhookd'
AS $function$
BEGIN
  INSERT INTO due_destinations (destination_id, due_at) VALUES (NEW.id, now());
  RETURN NULL;
END
$function$;

CREATE OR REPLACE TRIGGER destinations_hinted_enable AFTER UPDATE OF enabled ON webhookd.destinations FOR EACH ROW WHEN ((new.enabled AND (NOT old.enabled))) EXECUTE FUNCTION hint_enabled_destination();
