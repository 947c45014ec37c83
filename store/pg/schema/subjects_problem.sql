-- The subjects rule shared with the API's C++ (core/validation.h, kSubjectsRule): what is
-- wrong with an event's subjects, NULL when nothing is. A pgtest runs one table of cases
-- through both, so they cannot drift apart.
CREATE OR REPLACE FUNCTION webhookd.subjects_problem(subjects text[])
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
SELECT CASE
  WHEN subjects IS NULL THEN NULL
  WHEN array_ndims(subjects) > 1 OR cardinality(subjects) > 16
    OR EXISTS (SELECT 1 FROM unnest(subjects) s
                WHERE s IS NULL OR octet_length(s) NOT BETWEEN 1 AND 256
                   OR s ~ '[\x01-\x1f\x7f-\x9f]')
  THEN 'must be at most 16 strings, each 1-256 bytes of UTF-8 without control characters'
END
$function$;
