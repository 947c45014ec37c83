-- Filters whose cost grows faster than the payload are refused (docs/filters.md).
--
-- 0019's rules kept a filter from walking the payload once per value, but not from
-- comparing two sequences: jsonb_path_match compares every item of one side with every
-- item of the other, so `$.a[*] < $.b[*]` over two lists of 15,000 numbers took 13 s, in
-- an ingest that other tenants' events share. Nor from repeating items: each subscript of
-- `[0,0]` yields the item again, so twenty such lists yield 2^20 copies of it. Nor from
-- multiplying two numbers of 100,000 digits, which PostgreSQL does digit by digit.
--
-- The shape is read from the filter's normalized text (jsonpath's output) by a small
-- operator-precedence parser; the cost of evaluation then stays within a constant times
-- the payload's size, with the constant bounded by these budgets:
--  * a comparison has at most one side that can yield several items. In lax mode (the
--    default) every path into the payload can: an array is unwrapped where a value is
--    compared. In strict mode a path without [*], .*, **, [a to b] or .keyvalue()
--    yields at most one;
--  * * needs a number literal on one side, / and % a number literal on the right, and no
--    number literal in arithmetic is longer than 64 digits: the cost of numeric
--    arithmetic grows with the product of the operands' lengths (a comparison's, with
--    the shorter one's);
--  * array subscripts do not read the payload: `$.a[$.i[*]]` would read $.i once per
--    element of $.a;
--  * one subscript or one range per [ ]: each subscript of a list yields its items again,
--    so twenty lists [0,0] yield 2^20 copies of the payload;
--  * at most 12 path parts in all (each $ and @, and each accessor or method after
--    them), and at most one .keyvalue(), never with ** (it copies every value below
--    each node). Without repeated items each part visits each value of the payload at
--    most once (a filter ?(…) runs its references once per item, but over disjoint
--    parts of the payload), so a filter costs at most 12 walks of the payload.
CREATE TYPE webhookd.filter_shape AS (
  pos     int,     -- the next token
  refs    int,     -- references to the payload so far
  steps   int,     -- accessors and methods so far
  kvs     int,     -- .keyvalue() calls so far
  multi   boolean, -- the expression just read may yield several items
  kind    text,    -- pred | num (a number literal) | long (one over 64 digits) | lit | val | path
  problem text);

CREATE FUNCTION webhookd.filter_shape_expr(t text[], s webhookd.filter_shape, min_prec int,
                                           in_filter boolean, is_strict boolean)
  RETURNS webhookd.filter_shape
  LANGUAGE plpgsql IMMUTABLE SET search_path = webhookd AS $$
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
$$;

-- Why the filter's normalized text (jsonpath's output) has a shape whose cost may grow
-- faster than the payload, or NULL.
CREATE FUNCTION webhookd.filter_shape_problem(normalized text) RETURNS text
  LANGUAGE plpgsql IMMUTABLE SET search_path = webhookd AS $$
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
$$;

-- 0019's filter_problem with the shape rules above.
CREATE OR REPLACE FUNCTION webhookd.filter_problem(filter text) RETURNS text
  LANGUAGE plpgsql STABLE SET search_path = webhookd AS $$
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
$$;
