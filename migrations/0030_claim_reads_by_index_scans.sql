-- The claim reads by plain index scans, never bitmap scans. Every delivery passes through
-- deliveries_in_flight on its way to an outcome, and its entry there is dead once the
-- outcome is written. A plain index scan that meets a dead entry marks it, and later scans
-- step over it (the index keeps one entry per row, 0026); a bitmap scan marks nothing. The
-- claim's count of each visited destination's deliveries in flight was planned as a bitmap
-- scan, so it fetched every delivery sent since the last VACUUM from the heap again, at
-- every claim: measured with `webhookd all` at 2,000 events/s, 3,287 entries and 89
-- buffers for 4 rows in flight, and the claim took 2.3 ms where it took 1.15 ms with plain
-- index scans. Its read of the due hints was a bitmap scan too, with the same effect.
ALTER FUNCTION webhookd.claim_due(integer, bigint, bigint, integer) SET enable_bitmapscan = off;
