-- The payload as the filters see it, or NULL (so no filter delivers it) for the few
-- JSON texts that jsonb refuses though json takes them: \u0000, a lone surrogate, a
-- number beyond numeric's range. An error here would fail the whole fan-out.
CREATE OR REPLACE FUNCTION webhookd.payload_jsonb(payload text)
 RETURNS jsonb
 LANGUAGE plpgsql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$
BEGIN
  RETURN payload::jsonb;
EXCEPTION WHEN OTHERS THEN
  RETURN NULL;
END
$function$;
