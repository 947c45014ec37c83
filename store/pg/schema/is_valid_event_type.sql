-- The rules shared with the API's C++ (core/validation.h); a pgtest runs one table of
-- cases through both, so they cannot drift apart.
CREATE OR REPLACE FUNCTION webhookd.is_valid_event_type(t text)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE
AS $function$ SELECT t ~ '^[A-Za-z0-9._:-]{1,255}$' $function$;
