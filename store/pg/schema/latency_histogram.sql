-- The latency bins of the destinations' rollups (migrations/0044_destination_stats.sql):
-- 32 bins of half an octave, bin i holding the durations d (ms) with
-- 2^(i/2) <= d + 1 < 2^((i+1)/2); the thresholds are each bin's first whole millisecond,
-- so the bin is found by integers alone (core/latency_histogram.h holds the same table).
-- A batch's durations, counted into the bins, as an array of 32 counts.
CREATE OR REPLACE FUNCTION webhookd.latency_histogram(durations integer[])
 RETURNS integer[]
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
  SELECT array_agg(coalesce(c.n, 0) ORDER BY b.i)
    FROM generate_series(0, 31) b(i)
    LEFT JOIN (SELECT width_bucket(d, '{1,1,2,3,5,7,11,15,22,31,45,63,90,127,181,255,362,511,'
                                      '724,1023,1448,2047,2896,4095,5792,8191,11585,16383,'
                                      '23170,32767,46340}'::integer[]) AS i,
                      count(*)::integer AS n
                 FROM unnest(durations) d GROUP BY 1) c ON c.i = b.i
$function$;

-- Two histograms added bin by bin.
CREATE OR REPLACE FUNCTION webhookd.add_latency(a integer[], b integer[])
 RETURNS integer[]
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
  SELECT array_agg(x + y ORDER BY i) FROM unnest(a, b) WITH ORDINALITY u(x, y, i)
$function$;
