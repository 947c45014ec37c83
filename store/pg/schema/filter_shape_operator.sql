-- What a binary operator of a filter makes of its operands (filter_shape_expr.sql): a
-- comparison of two sequences, and arithmetic whose cost grows with the payload's
-- numbers, are refused. `prec` is the operator's precedence there, `l` the left operand's
-- shape and `s` the right one's.
CREATE OR REPLACE FUNCTION webhookd.filter_shape_operator(op text, prec integer, l filter_shape, s filter_shape)
 RETURNS filter_shape
 LANGUAGE plpgsql
 IMMUTABLE
 SET search_path TO 'webhookd'
AS $function$
BEGIN
  IF prec = 3 THEN
    IF l.multi AND s.multi THEN
      s.problem := 'may not compare two sequences (' || op || ' with several items on both '
                   'sides, which compares each item with each): compare with a literal, or '
                   'write strict and paths without [*], .*, **, [a to b] or .keyvalue()';
    END IF;
    s.kind := 'pred';
    s.multi := false;
  ELSIF prec IN (1, 2) THEN
    s.kind := 'pred';
    s.multi := false;
  ELSE
    IF 'long' IN (l.kind, s.kind) THEN
      s.problem := 'may not use numbers longer than 64 digits in arithmetic';
    ELSIF op = '*' AND l.kind <> 'num' AND s.kind <> 'num' THEN
      s.problem := 'may multiply only by a number literal: the cost of multiplying two '
                   'numbers of the payload grows with the product of their lengths';
    ELSIF op IN ('/', '%') AND s.kind <> 'num' THEN
      s.problem := 'may divide only by a number literal (' || op || ' with a number literal '
                   'on the right): the cost of dividing by a number of the payload grows with '
                   'the product of their lengths';
    END IF;
    -- Arithmetic yields one value, or an error that makes the filter unknown.
    s.kind := 'val';
    s.multi := false;
  END IF;
  RETURN s;
END
$function$;
