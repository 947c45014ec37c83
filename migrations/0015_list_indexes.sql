-- Lists and health figures at platform size (10 million deliveries).
--
-- GET /v1/deliveries?status=… walked the primary key backwards and skipped every row of
-- another status: a page of cancelled deliveries (one in a thousand) read ~50,000 rows,
-- a page of succeeded ones first skipped every pending one. One index serves every status.
CREATE INDEX deliveries_status ON webhookd.deliveries (status, id);
-- The dead letters of a window (stats, the chart, ?since=) were read by a scan of all of
-- them; they are written in time order, so BRIN costs next to nothing to keep.
CREATE INDEX dead_letters_dead_lettered ON webhookd.dead_letters USING brin (dead_lettered_at);
