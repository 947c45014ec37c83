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
  v_steps int := 0;
  v_wide boolean := false;
  v_refs int;
  v_subs int;
  v_ranged boolean;
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
    -- Accessors after the operand.
    LOOP
      EXIT WHEN s.problem IS NOT NULL;
      v_tok := t[s.pos];
      IF v_tok = '.' AND t[s.pos + 1] ~ '^"' THEN
        s.pos := s.pos + 2;
      ELSIF v_tok = '.*' OR v_tok ~ '^\.\*\*' THEN
        s.pos := s.pos + 1;
        v_wide := true;
      ELSIF v_tok = '[' THEN
        s.pos := s.pos + 1;
        v_subs := 0;
        v_ranged := false;
        IF t[s.pos] = '*' AND t[s.pos + 1] = ']' THEN
          s.pos := s.pos + 2;
          v_wide := true;
        ELSE
          v_refs := s.refs;
          LOOP
            v_subs := v_subs + 1;
            s := filter_shape_expr(t, s, 0, in_filter, is_strict);
            EXIT WHEN s.problem IS NOT NULL;
            IF t[s.pos] = 'to' THEN
              v_ranged := true;
              s.pos := s.pos + 1;
              s := filter_shape_expr(t, s, 0, in_filter, is_strict);
              EXIT WHEN s.problem IS NOT NULL;
            END IF;
            v_tok := t[s.pos];
            s.pos := s.pos + 1;
            EXIT WHEN v_tok IS DISTINCT FROM ',';
          END LOOP;
          IF s.problem IS NULL AND s.refs > v_refs THEN
            s.problem := 'array subscripts may be numbers and last alone, not paths into the payload';
          ELSIF v_subs > 1 THEN
            s.problem := 'may use one subscript or one range per [ ] ([0], [1 to 3]): each '
                         'subscript of a list yields its items again, [0,0] twice';
          ELSIF v_ranged THEN
            v_wide := true;
          END IF;
        END IF;
      ELSIF v_tok = '?(' THEN
        s.pos := s.pos + 1;
        v_left := s;
        s := filter_shape_expr(t, s, 0, true, is_strict);
        s.pos := s.pos + 1;  -- )
        s.multi := v_left.multi;
        s.kind := v_left.kind;
      ELSIF v_tok ~ '^\.[a-z_]+\($' THEN
        IF v_tok = '.keyvalue(' THEN
          s.kvs := s.kvs + 1;
          v_wide := true;
        END IF;
        s.pos := s.pos + 2;  -- the method and )
      ELSE
        EXIT;
      END IF;
      v_steps := v_steps + 1;
      s.steps := s.steps + 1;
      IF s.kind IN ('num', 'long', 'lit') THEN
        s.kind := 'val';
      ELSIF s.kind = 'pred' THEN
        s.kind := 'path';
      END IF;
    END LOOP;
    IF s.problem IS NOT NULL THEN
      RETURN s;
    END IF;
    -- Lax mode unwraps an array wherever a value is compared, so a path into the payload
    -- is a sequence there whatever its steps.
    IF NOT v_paren THEN
      s.multi := v_payload AND (v_wide OR NOT is_strict);
    ELSIF v_steps > 0 THEN
      s.multi := v_payload OR v_wide OR (NOT is_strict AND s.refs > 0);
    ELSE
      s.multi := v_payload;
    END IF;
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
    IF v_prec = 3 THEN
      IF v_left.multi AND s.multi THEN
        s.problem := 'may not compare two sequences (' || v_tok || ' with several items on both '
                     'sides, which compares each item with each): compare with a literal, or '
                     'write strict and paths without [*], .*, **, [a to b] or .keyvalue()';
      END IF;
      s.kind := 'pred';
      s.multi := false;
    ELSIF v_prec IN (1, 2) THEN
      s.kind := 'pred';
      s.multi := false;
    ELSE
      IF 'long' IN (v_left.kind, s.kind) THEN
        s.problem := 'may not use numbers longer than 64 digits in arithmetic';
      ELSIF v_tok = '*' AND v_left.kind <> 'num' AND s.kind <> 'num' THEN
        s.problem := 'may multiply only by a number literal: the cost of multiplying two '
                     'numbers of the payload grows with the product of their lengths';
      ELSIF v_tok IN ('/', '%') AND s.kind <> 'num' THEN
        s.problem := 'may divide only by a number literal (' || v_tok || ' with a number literal '
                     'on the right): the cost of dividing by a number of the payload grows with '
                     'the product of their lengths';
      END IF;
      -- Arithmetic yields one value, or an error that makes the filter unknown.
      s.kind := 'val';
      s.multi := false;
    END IF;
  END LOOP;
  RETURN s;
END
$function$;
