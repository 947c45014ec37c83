-- Before day $1 of the history is dropped, what of it is unfinished moves to the kept
-- partitions with everything about it: each event with a delivery still in the queue, and
-- its deliveries, attempts, dead letters and subject entries (migrations/0038_history_days.sql).
-- The day is marked as being dropped in the same statement, so a round after a crash
-- finishes it. Returns how many events it kept.
--
-- A queued delivery of the day is found through the queue's primary key, in the day's
-- range of delivery ids and the next day's (an event of the earlier release written just
-- before midnight may have its delivery's id past the day's bound). A delivery queued
-- after this statement (a replay) is kept by the sweep after the detach
-- (store/pg/schema/sweep_detached_history_day.sql). A row moved here while an outcome
-- updates it fails that outcome's statement, which the worker retries.
WITH h AS (
  SELECT coalesce(event_from, -9223372036854775808) AS e_from, event_to AS e_to,
         coalesce(delivery_from, -9223372036854775808) AS d_from, delivery_to AS d_to,
         coalesce((SELECT n.delivery_to FROM history_days n WHERE n.day > $1::date
                    ORDER BY n.day LIMIT 1), delivery_to) AS scan_to
    FROM history_days WHERE day = $1::date),
unfinished AS (
  SELECT DISTINCT d.event_id
    FROM h, delivery_queue q JOIN deliveries d ON d.id = q.id
   WHERE q.id >= h.d_from AND q.id < h.scan_to
     AND (q.id < h.d_to OR (d.event_id >= h.e_from AND d.event_id < h.e_to))),
ev AS (
  UPDATE events e SET kept = true FROM unfinished u
   WHERE e.id = u.event_id AND NOT e.kept
  RETURNING e.id, e.subjects, e.tenant_id),
dl AS (
  UPDATE deliveries d SET kept = true FROM unfinished u
   WHERE d.event_id = u.event_id AND NOT d.kept
  RETURNING d.id),
att AS (
  UPDATE attempts a SET kept = true FROM dl WHERE a.delivery_id = dl.id AND NOT a.kept),
dlq AS (
  UPDATE dead_letters x SET kept = true FROM dl WHERE x.delivery_id = dl.id AND NOT x.kept),
subj AS (
  UPDATE event_subjects s SET kept = true FROM ev, unnest(ev.subjects) n(subject)
   WHERE s.subject_hash = sha256(convert_to(n.subject, 'UTF8'))
     AND s.tenant_scope = coalesce(ev.tenant_id, '') AND s.event_id = ev.id AND NOT s.kept),
mark AS (
  UPDATE history_days SET detaching_since = coalesce(detaching_since, now())
   WHERE day = $1::date)
SELECT count(*) FROM ev
