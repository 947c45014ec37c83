-- Every event with subjects is indexed by each subject's SHA-256 (migrations/0036_subjects.sql),
-- whichever statement made it (REST, grouped ingest, publish()). A row trigger that fires
-- only for such an event: an ingest without subjects pays the WHEN test alone. An event
-- written as kept is one that retention copied out of a day it dropped, with its entries
-- (drop_detached_history_day.sql).
CREATE OR REPLACE FUNCTION webhookd.index_event_subjects()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'webhookd'
AS $function$
BEGIN
  INSERT INTO event_subjects (subject_hash, tenant_scope, event_id)
    SELECT DISTINCT sha256(convert_to(s, 'UTF8')), coalesce(NEW.tenant_id, ''), NEW.id
      FROM unnest(NEW.subjects) s;
  RETURN NULL;
END
$function$;

CREATE OR REPLACE TRIGGER events_subjects_indexed AFTER INSERT ON webhookd.events FOR EACH ROW WHEN (NEW.subjects IS NOT NULL AND NOT NEW.kept) EXECUTE FUNCTION index_event_subjects();
