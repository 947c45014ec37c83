-- The accessors after an operand of a filter (filter_shape_expr.sql): member and
-- wildcard steps, subscripts, filter expressions ?(…) and item methods, and whether the
-- path, so extended, yields several items where it is compared.
-- `paren`: the operand was ( … ); `payload`: it starts at $ or @ (or, in parentheses,
-- already yields several items).
CREATE OR REPLACE FUNCTION webhookd.filter_shape_accessors(t text[], s filter_shape, in_filter boolean, is_strict boolean, paren boolean, payload boolean)
 RETURNS filter_shape
 LANGUAGE plpgsql
 IMMUTABLE
 SET search_path TO 'webhookd'
AS $function$
DECLARE
  v_tok text;
  v_left webhookd.filter_shape;
  v_steps int := 0;
  v_wide boolean := false;
  v_refs int;
  v_subs int;
  v_ranged boolean;
BEGIN
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
  IF NOT paren THEN
    s.multi := payload AND (v_wide OR NOT is_strict);
  ELSIF v_steps > 0 THEN
    s.multi := payload OR v_wide OR (NOT is_strict AND s.refs > 0);
  ELSE
    s.multi := payload;
  END IF;
  RETURN s;
END
$function$;
