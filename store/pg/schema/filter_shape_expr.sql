-- The operator-precedence parser of filter_shape_problem.sql: reads one expression of a
-- filter's normalized text and tracks the budgets that keep a filter's cost within a
-- constant times the payload's size (docs/filters.md).
CREATE OR REPLACE FUNCTION webhookd.filter_shape_expr(t text[], s filter_shape, min_prec integer, in_filter boolean, is_strict boolean)
 RETURNS filter_shape
 LANGUAGE plpgsql
 IMMUTABLE
 SET search_path TO 'webhookd'
AS $function$
DECLARE
  v_tok text;
  v_prec int;
  v_left webhookd.filter_shape;
  v_payload boolean := false;  -- the path starts at $ or @
  v_paren boolean := false;    -- ... or at ( … ), which yields several items if v_payload
BEGIN
  v_tok := t[s.pos];
  -- The operand: unary operators, parentheses, literals and paths.
  IF v_tok = '!' THEN
    s.pos := s.pos + 1;
    s := filter_shape_expr(t, s, 6, in_filter, is_strict);
    s.kind := 'pred';
    s.multi := false;
  ELSIF v_tok IN ('-', '+') THEN
    s.pos := s.pos + 1;
    s := filter_shape_expr(t, s, 6, in_filter, is_strict);
    IF s.kind NOT IN ('num', 'long', 'pred') THEN
      s.kind := 'val';
    END IF;
  ELSIF v_tok = 'exists' AND t[s.pos + 1] = '(' THEN
    s.pos := s.pos + 2;
    s := filter_shape_expr(t, s, 0, in_filter, is_strict);
    s.pos := s.pos + 1;  -- )
    s.kind := 'pred';
    s.multi := false;
  ELSE
    IF v_tok = '(' THEN
      s.pos := s.pos + 1;
      s := filter_shape_expr(t, s, 0, in_filter, is_strict);
      s.pos := s.pos + 1;  -- )
      IF t[s.pos] = 'is' AND t[s.pos + 1] = 'unknown' THEN
        s.pos := s.pos + 2;
        s.kind := 'pred';
        s.multi := false;
      END IF;
      v_paren := true;
      v_payload := s.multi;
    ELSIF v_tok IN ('$', '@') THEN
      IF v_tok = '$' AND in_filter THEN
        s.problem := 'may not use $ inside a filter expression ?(…): use @, the current item';
        RETURN s;
      END IF;
      s.pos := s.pos + 1;
      s.refs := s.refs + 1;
      s.kind := 'path';
      v_payload := true;
    ELSIF v_tok ~ '^[0-9]' THEN
      s.pos := s.pos + 1;
      s.kind := CASE WHEN length(regexp_replace(v_tok, '[^0-9]', '', 'g')) > 64 THEN 'long'
                     ELSE 'num' END;
    ELSIF v_tok = 'last' THEN
      s.pos := s.pos + 1;
      s.kind := 'val';
    ELSIF v_tok ~ '^"' OR v_tok IN ('true', 'false', 'null') THEN
      s.pos := s.pos + 1;
      s.kind := 'lit';
    ELSE
      s.problem := 'has a shape webhookd cannot check near "' || coalesce(v_tok, 'the end') || '"';
      RETURN s;
    END IF;
    IF NOT v_paren THEN
      s.multi := false;
    END IF;
    s := filter_shape_accessors(t, s, in_filter, is_strict, v_paren, v_payload);
  END IF;
  -- Binary operators of at least min_prec, left to right.
  LOOP
    EXIT WHEN s.problem IS NOT NULL;
    v_tok := t[s.pos];
    v_prec := CASE
      WHEN v_tok = '||' THEN 1
      WHEN v_tok = '&&' THEN 2
      WHEN v_tok IN ('==', '!=', '<>', '<', '<=', '>', '>=', 'starts', 'like_regex') THEN 3
      WHEN v_tok IN ('+', '-') THEN 4
      WHEN v_tok IN ('*', '/', '%') THEN 5
    END;
    EXIT WHEN v_prec IS NULL OR v_prec < min_prec;
    IF v_tok = 'like_regex' THEN
      s.pos := s.pos + 2;  -- like_regex "pattern"
      IF t[s.pos] = 'flag' THEN
        s.pos := s.pos + 2;
      END IF;
      s.kind := 'pred';
      s.multi := false;
      CONTINUE;
    END IF;
    s.pos := s.pos + CASE WHEN v_tok = 'starts' THEN 2 ELSE 1 END;
    v_left := s;
    s := filter_shape_expr(t, s, v_prec + 1, in_filter, is_strict);
    EXIT WHEN s.problem IS NOT NULL;
    s := filter_shape_operator(v_tok, v_prec, v_left, s);
  END LOOP;
  RETURN s;
END
$function$;
