-- Recoveries (docs/operations.md "An endpoint was down"): the replay of one destination's
-- dead letters of a time window, carried out a page at a time by the server processes.
-- The row is the whole state: the window, how far the pages have gone (`after_id`, the
-- last dead letter id a page looked at) and what was replayed, so a restart resumes it.
-- `until` is fixed when it is asked for (at most then), so the dead letters of the
-- deliveries it replays, should they fail again, are not in its window.
CREATE TABLE webhookd.recoveries (
  id              bigint GENERATED ALWAYS AS IDENTITY,
  destination_id  bigint NOT NULL,
  tenant_id       text,  -- its destination's, for the tenant's key
  since           timestamptz NOT NULL,
  until           timestamptz NOT NULL,
  status          text NOT NULL DEFAULT 'running',
  replayed        bigint NOT NULL DEFAULT 0,
  after_id        bigint NOT NULL DEFAULT 0,
  created_at      timestamptz NOT NULL DEFAULT now(),
  finished_at     timestamptz,
  CONSTRAINT recoveries_pkey PRIMARY KEY (id),
  CONSTRAINT recoveries_status_check CHECK (status IN ('running', 'done')),
  CONSTRAINT recoveries_window_check CHECK (since < until),
  CONSTRAINT recoveries_finished_when_done
    CHECK ((status = 'done') = (finished_at IS NOT NULL)));
CREATE INDEX recoveries_running ON webhookd.recoveries (id) WHERE status = 'running';
CREATE INDEX recoveries_running_destination ON webhookd.recoveries (destination_id)
  WHERE status = 'running';
