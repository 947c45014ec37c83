-- The purge looks for old events in id order, and with none old enough it read the whole
-- of events to find that out: every 5 s, ~3,100 buffers at 200,000 events and a read of
-- every page at millions. Events are written in id order at about the time they are
-- stamped, so the last old one can be found by bisecting ids, one primary-key lookup a
-- step; the purge then reads ids up to it and no further.
--
-- Ids and created_at are not in exactly the same order (an ingest transaction's events
-- are stamped when it began; a publish() in a long transaction, earlier still). The purge
-- still checks each event's own created_at, so the bound only defers an old event that
-- sits past it to a later round, once the events around it are old too.
CREATE OR REPLACE FUNCTION webhookd.last_event_before(cutoff timestamp with time zone)
 RETURNS bigint
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'webhookd', 'pg_temp'
AS $function$
DECLARE
  lo bigint;  -- an event older than the cutoff
  hi bigint;  -- no event past it is sought
  mid bigint;
  probe_id bigint;
  probe_at timestamptz;
BEGIN
  SELECT id, created_at INTO lo, probe_at FROM events ORDER BY id LIMIT 1;
  IF lo IS NULL OR probe_at >= cutoff THEN
    RETURN 0;
  END IF;
  SELECT id INTO hi FROM events ORDER BY id DESC LIMIT 1;
  WHILE lo < hi LOOP
    mid := lo + (hi - lo + 1) / 2;
    SELECT id, created_at INTO probe_id, probe_at FROM events WHERE id >= mid ORDER BY id LIMIT 1;
    IF probe_at < cutoff THEN
      lo := probe_id;
    ELSE
      hi := mid - 1;
    END IF;
  END LOOP;
  RETURN lo;
END
$function$;
