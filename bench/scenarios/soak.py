"""Retention soak (--soak): `webhookd all` with WEBHOOKD_RETENTION=30s under steady load."""

from harness.load import load
from harness.log import log
from harness.processes import hwm_mib

HELP = """\
--soak [MINUTES] (default 3) measures retention instead: `webhookd all` with
WEBHOOKD_RETENTION=30s takes 1,000 events/s for MINUTES while delivering them to the sink;
every 30 s it prints the events kept, the size of the event, delivery, attempt and
dead-letter tables, and the delivery rate of that interval. With retention working, the
count and the sizes level off after the first minute and the rate stays flat."""


def run(b) -> int:
    rate, minutes = b.cfg.e2e_rate, b.cfg.soak_minutes
    log(f"soak: webhookd all, WEBHOOKD_RETENTION=30s, {rate} events/s for {minutes} min")
    db = b.new_db("bench_soak")
    proc, port = b.start_webhookd("soak", "all", db, WEBHOOKD_RETENTION="30s")
    b.create_destination(port, f"http://127.0.0.1:{b.sink.port}/soak")
    row = "{:<8} {:>12} {:>12} {:>14} {:>10}"
    print(row.format("elapsed", "events_kept", "tables_mib", "delivered_per_s", "rss_mib"),
          flush=True)
    for i in range(1, minutes * 2 + 1):
        before = b.sink.ok()
        load(b, f"soak-{i}", "--port", port, "--key", b.key, "--duration", 30, "--rate", rate)
        after = b.sink.ok()
        kept, mib = (db.sql("table_sizes").split("|") + ["", ""])[:2]
        print(row.format(f"{i * 30}s", kept, mib, (after - before) // 30, hwm_mib(proc.pid)),
              flush=True)
    b.procs.stop(proc)
    db.drop()
    return 0
