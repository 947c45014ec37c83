-- The claim probes each open destination through deliveries_pending_by_destination.
-- With deliveries_due beside it, the planner walked deliveries_due and filtered on the
-- destination instead (10,000 rows read per destination per claim on a 50,000 backlog:
-- 5 ms a claim, the worker's bottleneck), and every insert and claim paid for one more
-- index. Nothing else needs it: the next due time is taken per destination too.
DROP INDEX deliveries_due;
