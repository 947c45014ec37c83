-- Why the filter's normalized text (jsonpath's output) has a shape whose cost may grow
-- faster than the payload, or NULL.
CREATE OR REPLACE FUNCTION webhookd.filter_shape_problem(normalized text)
 RETURNS text
 LANGUAGE plpgsql
 IMMUTABLE
 SET search_path TO 'webhookd'
AS $function$
DECLARE
  v_tokens text[];
  v_strict boolean := false;
  v_shape webhookd.filter_shape;
BEGIN
  SELECT array_agg(m[1] ORDER BY n) INTO v_tokens
    FROM regexp_matches(normalized,
           '("(?:\\.|[^"\\])*"|[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|\.\*\*(?:\{[^}]*\})?|'
           '\.\*|\.[a-z_]+\(|\?\(|&&|\|\||==|!=|<>|<=|>=|[a-z_]+|[$@()\[\],<>!+*/%.-])',
           'g') WITH ORDINALITY AS r(m, n);
  IF v_tokens[1] IN ('strict', 'lax') THEN
    v_strict := v_tokens[1] = 'strict';
    v_tokens := v_tokens[2:];
  END IF;
  v_shape := filter_shape_expr(v_tokens, ROW(1, 0, 0, 0, false, NULL, NULL)::filter_shape, 0,
                               false, v_strict);
  IF v_shape.problem IS NOT NULL THEN
    RETURN v_shape.problem;
  ELSIF v_shape.pos <> cardinality(v_tokens) + 1 THEN
    RETURN 'has a shape webhookd cannot check near "' || v_tokens[v_shape.pos] || '"';
  ELSIF v_shape.refs + v_shape.steps > 12 THEN
    RETURN 'may have at most 12 path parts in all: each $ and @, and each .key, [*], [0], '
           '.*, **, ?(…), .size() and other method after them, counts one';
  ELSIF v_shape.kvs > 1 THEN
    RETURN 'may use .keyvalue() at most once';
  ELSIF v_shape.kvs > 0 AND position('**' IN normalized) > 0 THEN
    RETURN 'may not use .keyvalue() with **: it would copy every value below each node';
  END IF;
  RETURN NULL;
EXCEPTION WHEN OTHERS THEN
  -- Deep nesting can exhaust the stack of the recursive reader.
  RETURN 'is nested too deeply to check';
END
$function$;
