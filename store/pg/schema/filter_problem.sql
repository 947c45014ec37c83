-- Why a text may not be a filter, or NULL: it must parse as a jsonpath predicate, and
-- its shape must keep its cost within a constant times the payload's size
-- (filter_shape_problem.sql, docs/filters.md).
CREATE OR REPLACE FUNCTION webhookd.filter_problem(filter text)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'webhookd'
AS $function$
DECLARE
  v_path jsonpath;
  v_text text;
  v_bare text;
  v_kinds text[];
  v_stack text := '';
  v_ch text;
  v_pattern text;
  v_regexes int := 0;
  v_shape text;
BEGIN
  IF octet_length(filter) > 4096 THEN
    RETURN 'must be at most 4096 bytes';
  END IF;
  BEGIN
    v_path := filter::jsonpath;
  EXCEPTION WHEN OTHERS THEN
    RETURN 'is not a valid SQL/JSON path predicate: ' || SQLERRM;
  END;
  v_text := v_path::text;  -- normalized: strings double-quoted, variables as $"name"
  v_bare := regexp_replace(v_text, '"(\\.|[^"\\])*"', '""', 'g');
  IF position('$""' IN v_bare) > 0 THEN
    RETURN 'may not use variables ($name): a filter sees the payload ($) alone';
  ELSIF v_bare ~ '\.datetime\(' THEN
    RETURN 'may not use .datetime(); compare RFC 3339 strings instead ($.at >= "2026-01-01")';
  ELSIF length(v_bare) - length(replace(v_bare, '**', '')) > 2 THEN
    RETURN 'may use ** at most once';
  END IF;
  -- $ inside a filter expression: walk the parentheses, "f" for ?( and "g" for (.
  FOR i IN 1 .. length(v_bare) LOOP
    v_ch := substr(v_bare, i, 1);
    IF v_ch = '(' THEN
      v_stack := v_stack || CASE WHEN i > 1 AND substr(v_bare, i - 1, 1) = '?' THEN 'f' ELSE 'g' END;
    ELSIF v_ch = ')' THEN
      v_stack := left(v_stack, -1);
    ELSIF v_ch = '$' AND position('f' IN v_stack) > 0 THEN
      RETURN 'may not use $ inside a filter expression ?(…): use @, the current item';
    END IF;
  END LOOP;
  FOR v_pattern IN SELECT m[1] FROM regexp_matches(v_text, 'like_regex "((\\.|[^"\\])*)"', 'g') m LOOP
    v_regexes := v_regexes + 1;
    IF v_regexes > 4 THEN
      RETURN 'may use like_regex at most 4 times';
    ELSIF length(v_pattern) > 128 THEN
      RETURN 'like_regex patterns may be at most 128 characters long';
    ELSIF v_pattern ~ '\\\\[1-9]' THEN
      RETURN 'may not use back-references (\1 … \9) in like_regex';
    ELSIF (SELECT count(*) > 2 OR coalesce(bool_or(greatest(nullif(q[1], '')::numeric,
                                                            nullif(q[2], '')::numeric) > 16), false)
             FROM regexp_matches(v_pattern, '\{([0-9]*)(?:,([0-9]*))?\}', 'g') q) THEN
      RETURN 'like_regex may use at most two counted repetitions {n,m}, each with bounds up to 16';
    END IF;
  END LOOP;
  v_shape := filter_shape_problem(v_text);
  IF v_shape IS NOT NULL THEN
    RETURN v_shape;
  END IF;
  SELECT array_agg(jsonb_typeof(v)) INTO v_kinds
    FROM jsonb_path_query('{}'::jsonb, v_path, '{}', true) v;
  IF v_kinds IS NULL OR cardinality(v_kinds) <> 1 OR v_kinds[1] NOT IN ('boolean', 'null') THEN
    RETURN 'must be a predicate, true or false for a payload: a comparison, exists(…), '
           'like_regex, starts with, is unknown, or !, && and || of them';
  END IF;
  RETURN NULL;
END
$function$;
