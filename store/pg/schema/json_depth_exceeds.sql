-- 2. publish() is held to the API's limits: the body size and 64 levels of nesting (a 400
--    KB payload and 100 levels were accepted). Depth without a parser: strings (which may
--    hold brackets) go, then everything but brackets, then each round removes the
--    innermost pairs; the rounds it takes are the depth, and it stops past the limit, so
--    a pathological document costs at most limit + 1 passes over its brackets.
CREATE OR REPLACE FUNCTION webhookd.json_depth_exceeds(doc text, max_depth integer)
 RETURNS boolean
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
DECLARE
  s text := regexp_replace(regexp_replace(doc, '"(\\.|[^"\\])*"', '', 'g'), '[^][{}]', '', 'g');
  depth int := 0;
  before int;
BEGIN
  WHILE s <> '' LOOP
    depth := depth + 1;
    IF depth > max_depth THEN
      RETURN true;
    END IF;
    before := length(s);
    s := regexp_replace(s, '\[\]|\{\}', '', 'g');
    IF length(s) = before THEN
      RETURN false;  -- unbalanced: not JSON, which the caller checks
    END IF;
  END LOOP;
  RETURN false;
END
$function$;
