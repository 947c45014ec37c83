-- A recovery's second pass (store/pg/sql/replay_recovery_page.sql). Its pages follow the
-- dead letters' ids, but an id is drawn when its row is written and the row is seen only
-- once its transaction commits: a dead letter whose transaction was still open while a
-- page passed its id would be behind the cursor, never replayed. So once the first pass
-- comes back short, the recovery goes over its window once more from the start, for what
-- is still neither replayed nor dismissed (such late ones, and those another recovery or
-- bulk replay held when the first pass met them and then let go), and is done when that
-- pass comes back short. The transactions that write dead letters are short; by the time
-- the second pass begins, the first pass has taken at least a page.
ALTER TABLE webhookd.recoveries
  ADD COLUMN pass smallint NOT NULL DEFAULT 1,
  ADD CONSTRAINT recoveries_pass_check CHECK (pass IN (1, 2));
