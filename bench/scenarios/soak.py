"""Retention soak (--soak): `webhookd all` with WEBHOOKD_RETENTION=30s under steady load."""

import sys

from harness.load import load
from harness.log import log
from harness.processes import hwm_mib
from harness.stats import field, num

HELP = """\
--soak [MINUTES] (default 3) measures retention instead: `webhookd all` with
WEBHOOKD_RETENTION=30s takes 1,000 events/s for MINUTES while delivering them to the sink;
every 30 s it prints the events kept, the size of the event, delivery, attempt and
dead-letter tables, and the delivery rate of that interval. With retention working, the
count and the sizes level off after the first minute and the rate stays flat. It exits 1
when it saw a failure: a request not accepted, or at the end (the backlog delivered) a
bad signature, a webhook-id delivered twice, or distinct webhook-ids at the sink not the
events accepted."""


def run(b) -> int:
    rate, minutes = b.cfg.e2e_rate, b.cfg.soak_minutes
    log(f"soak: webhookd all, WEBHOOKD_RETENTION=30s, {rate} events/s for {minutes} min")
    db = b.new_db("bench_soak")
    proc, port = b.start_webhookd("soak", "all", db, WEBHOOKD_RETENTION="30s")
    b.create_destination(port, f"http://127.0.0.1:{b.sink.port}/soak")
    row = "{:<8} {:>12} {:>12} {:>14} {:>10}"
    print(row.format("elapsed", "events_kept", "tables_mib", "delivered_per_s", "rss_mib"),
          flush=True)
    b.sink.reset()
    accepted = 0
    for i in range(1, minutes * 2 + 1):
        before = b.sink.ok()
        line = load(b, f"soak-{i}", "--port", port, "--key", b.key, "--duration", 30,
                    "--rate", rate)
        accepted += int(num(field(line, "ok")))
        after = b.sink.ok()
        kept, mib = (db.sql("table_sizes").split("|") + ["", ""])[:2]
        print(row.format(f"{i * 30}s", kept, mib, (after - before) // 30, hwm_mib(proc.pid)),
              flush=True)
    b.sink.quiet()
    wrong = b.sink.since_reset(accepted)
    if wrong:
        b.invalidate(f"soak: {wrong}", "soak")
    b.procs.stop(proc)
    db.drop()
    # The soak has no figures table: a failed check is its notes and its exit status.
    if b.figs.invalid:
        print("error: a correctness check failed; see the notes", file=sys.stderr)
        return 1
    return 0
