"""Real receivers: slow, sometimes failing, 200 of them, one worker at concurrency 1024."""

from harness import http
from harness.drain import drain
from harness.figures import Part
from harness.log import log
from harness.stats import field

HELP = """\
  slow_receivers_per_s    real receivers: N/2 due deliveries over 200 destinations at
                          bench_sink's /slow/ (a log-normal answer time: median 100 ms,
                          99th percentile 500 ms; 1 % answered 503 and retried after 1 s),
                          one `webhookd worker` with WEBHOOKD_WORKER_CONCURRENCY=1024 and
                          the default per-destination cap; INVALID when a delivery did
                          not succeed or the attempts exceed the retries that 503s explain
"""


def measure(b) -> Part:
    n = b.cfg.deliveries // 2
    log(f"receivers: {n} deliveries over 200 receivers answering in ~100 ms (p99 500 ms, 1 %"
        " 503), one worker at concurrency 1024")
    proc, slow = b.tool_sink("slow-sink", "--backlog", 4096, "--secret", b.secret)
    db = b.new_db("bench_receivers")
    db.sql("receivers", n=n, dests=200, sink=f"127.0.0.1:{slow.port}", secret=b.secret)
    done = drain(b, "receivers", "worker", n, db, sink=slow, extra_attempts=n // 20,
                 env={"WEBHOOKD_WORKER_CONCURRENCY": 1024,
                      "WEBHOOKD_RETRY_SCHEDULE": "1s,1s,1s,1s"})
    failed = field(http.get_text(slow.port, "/stats"), "failed")
    db.drop()
    b.procs.stop(proc)
    part = Part()
    part.add("slow_receivers_per_s", done.rate, ">= 5000")
    part.details["receivers"] = (f"receivers      {n} over 200 slow receivers: {done.rate}/s,"
                                 f" {failed or '?'} answered 503 and retried, peak RSS"
                                 f" {done.hwm} MiB")
    return part
