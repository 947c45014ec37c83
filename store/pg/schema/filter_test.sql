-- Whether `filter` delivers `payload`, for the console's filter editor (POST
-- /v1/filters/test): the fan-out's test exactly. A filter that may not be one raises
-- 22023 with filter_problem's reason.
CREATE OR REPLACE FUNCTION webhookd.filter_test(filter text, payload jsonb)
 RETURNS boolean
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'webhookd'
AS $function$
DECLARE
  v_problem text := filter_problem(filter);
BEGIN
  IF v_problem IS NOT NULL THEN
    RAISE EXCEPTION 'filter: %', v_problem USING ERRCODE = '22023';
  END IF;
  RETURN coalesce(jsonb_path_match(payload, filter::jsonpath, '{}', true), false);
END
$function$;
